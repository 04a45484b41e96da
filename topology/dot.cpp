#include "topology/dot.hpp"

#include <fmt/format.h>

namespace parasim::topology {
namespace {

std::string_view shape(VertexKind k) {
  switch (k) {
    case VertexKind::gpu: return "box";
    case VertexKind::nic: return "ellipse";
    case VertexKind::cpu: return "octagon";
    default: return "diamond";
  }
}

}  // namespace

std::string to_dot(const Cluster& c) {
  const Graph& g = c.graph();
  std::string out = fmt::format("graph \"{}\" {{\n  node [fontsize=10];\n", c.spec().name);
  for (int node = 0; node < c.node_count(); ++node) {
    out += fmt::format("  subgraph cluster_node{} {{\n    label=\"node {}\";\n", node, node);
    for (std::size_t i = 0; i < c.node_size(); ++i) {
      const Vertex v = c.node_base(node) + i;
      out += fmt::format("    \"{}\" [shape={}];\n", c.vertex_name(v), shape(g[v].kind));
    }
    out += "  }\n";
  }
  for (Vertex v = c.first_switch(); v < boost::num_vertices(g); ++v) {
    out += fmt::format("  \"{}\" [shape={}];\n", c.vertex_name(v), shape(g[v].kind));
  }
  for (std::size_t id = 0; id < c.link_count(); id += 2) {
    const Edge e = c.edge(id);
    out += fmt::format("  \"{}\" -- \"{}\" [label=\"{}\"];\n", c.vertex_name(boost::source(e, g)),
                       c.vertex_name(boost::target(e, g)), format_bandwidth(g[e].bandwidth));
  }
  out += "}\n";
  return out;
}

}  // namespace parasim::topology
