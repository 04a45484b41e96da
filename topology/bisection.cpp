#include "topology/bisection.hpp"

#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>

namespace parasim::topology {
namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, long,
                    boost::property<boost::edge_residual_capacity_t, long,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

// Capacities in whole kB/s keep the max-flow in exact integer arithmetic.
constexpr double kUnit = 1e3;

}  // namespace

BytesPerSecond max_flow_between(const Cluster& cluster, int split) {
  const Graph& g = cluster.graph();
  const std::size_t n = boost::num_vertices(g);
  FlowGraph f(n + 2);
  const auto source = static_cast<FlowTraits::vertex_descriptor>(n);
  const auto sink = static_cast<FlowTraits::vertex_descriptor>(n + 1);
  auto capacity = boost::get(boost::edge_capacity, f);
  auto reverse = boost::get(boost::edge_reverse, f);
  auto add = [&](std::size_t u, std::size_t v, long cap) {
    const auto e = boost::add_edge(u, v, f).first;
    const auto r = boost::add_edge(v, u, f).first;
    capacity[e] = cap;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  long total_links = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const long cap = std::lround(g[*e].bandwidth.value() / kUnit);
    add(boost::source(*e, g), boost::target(*e, g), cap);
    total_links += cap;
  }
  // Source and sink edges never limit the flow.
  for (int gpu = 0; gpu < cluster.gpu_count(); ++gpu) {
    const auto v = cluster.gpu_vertex(gpu);
    if (gpu < split) add(source, v, total_links);
    else add(v, sink, total_links);
  }
  const long flow = boost::push_relabel_max_flow(f, source, sink);
  return BytesPerSecond(static_cast<double>(flow) * kUnit);
}

BytesPerSecond bisection_bandwidth(const Cluster& cluster) {
  return max_flow_between(cluster, cluster.gpu_count() / 2);
}

}  // namespace parasim::topology
