// Links no traffic pattern tells apart fold into one fluid resource, and the rates stay the same.
#include <doctest/doctest.h>

#include "sim/link_classes.hpp"
#include "tests/topology/fixtures.hpp"

using namespace parasim;
using namespace parasim::sim;

namespace {

LinkUsage pattern(const topology::Cluster& cluster, std::vector<FluidModel::Usage> usage) {
  LinkUsage u;
  for (const auto& x : usage) u.capacities.push_back(cluster.link(x.resource).bandwidth.value());
  u.usage = std::move(usage);
  return u;
}

// The ids of node 0's links of one kind, in id order.
std::vector<FluidModel::ResourceId> links_of(const topology::Cluster& c, topology::LinkKind kind) {
  std::vector<FluidModel::ResourceId> out;
  for (std::size_t id = 0; id < c.links_per_node(); ++id) {
    if (c.link(id).kind == kind) out.push_back(static_cast<FluidModel::ResourceId>(id));
  }
  return out;
}

}  // namespace

TEST_CASE("links with the same capacity and the same weight in every pattern fold into one class") {
  const topology::Cluster cluster(test::dgx_cluster(2));
  const auto nv = links_of(cluster, topology::LinkKind::nvlink);
  const auto pcie = links_of(cluster, topology::LinkKind::pcie);
  REQUIRE(nv.size() >= 4);
  // An ECMP-like fan: nv[0] and nv[1] carry half of A each and all of B; nv[2] carries A in full;
  // pcie[0] carries half of A and all of B like the fan, but at another capacity.
  const auto a = pattern(cluster, {{nv[0], 0.5}, {nv[1], 0.5}, {nv[2], 1.0}, {pcie[0], 0.5}});
  const auto b = pattern(cluster, {{nv[0], 1.0}, {nv[1], 1.0}, {pcie[0], 1.0}});
  const std::vector<const LinkUsage*> patterns{&a, &b};
  const auto classes = link_classes(cluster, patterns);
  CHECK(classes.links == 4);
  REQUIRE(classes.capacities.size() == 3);  // {nv0, nv1}, {nv2}, {pcie0}
  CHECK(classes.capacities[0] == cluster.link(nv[0]).bandwidth.value());
  CHECK(classes.capacities[2] == cluster.link(pcie[0]).bandwidth.value());
  const auto& ua = classes.usage.at(&a);
  REQUIRE(ua.size() == 3);
  CHECK(ua[0].resource == 0);
  CHECK(ua[0].weight == 0.5);
  CHECK(ua[1].resource == 1);
  CHECK(ua[1].weight == 1.0);
  CHECK(ua[2].resource == 2);
  const auto& ub = classes.usage.at(&b);
  REQUIRE(ub.size() == 2);
  CHECK(ub[0].resource == 0);
  CHECK(ub[1].resource == 2);
}

TEST_CASE("one pattern that loads a fan unevenly splits it") {
  const topology::Cluster cluster(test::dgx_cluster(2));
  const auto nv = links_of(cluster, topology::LinkKind::nvlink);
  const auto a = pattern(cluster, {{nv[0], 0.5}, {nv[1], 0.5}});
  const auto c = pattern(cluster, {{nv[0], 1.0}});
  const std::vector<const LinkUsage*> patterns{&a, &c};
  const auto classes = link_classes(cluster, patterns);
  CHECK(classes.capacities.size() == 2);
  CHECK(classes.usage.at(&a).size() == 2);
  CHECK(classes.usage.at(&c).size() == 1);
}

TEST_CASE("max-min rates over the classes equal the rates over every link, bit for bit") {
  // Three flows over a fan of two equal links and a private link: B's fair share of the fan, A's
  // limit on its own link and C's leftover come out the same whichever way the links are counted.
  const topology::Cluster cluster(test::dgx_cluster(2));
  const auto nv = links_of(cluster, topology::LinkKind::nvlink);
  const auto a = pattern(cluster, {{nv[0], 0.5}, {nv[1], 0.5}, {nv[2], 3.0}});
  const auto b = pattern(cluster, {{nv[0], 1.0}, {nv[1], 1.0}});
  const auto c = pattern(cluster, {{nv[0], 0.25}, {nv[1], 0.25}, {nv[3], 0.1}});
  const std::vector<const LinkUsage*> patterns{&a, &b, &c};
  const auto classes = link_classes(cluster, patterns);
  CHECK(classes.capacities.size() == 3);  // the fan, nv2, nv3

  FluidModel by_link, by_class;
  for (std::size_t l = 0; l < cluster.link_count(); ++l) by_link.add_resource(cluster.link(l).bandwidth.value());
  for (double capacity : classes.capacities) by_class.add_resource(capacity);
  std::vector<FluidModel::ActivityId> raw, folded;
  for (const auto* p : patterns) {
    raw.push_back(by_link.start(1e9, p->usage));
    folded.push_back(by_class.start(1e9, classes.usage.at(p)));
  }
  for (std::size_t i = 0; i < raw.size(); ++i) {
    CHECK(by_link.rate(raw[i]) > 0);
    CHECK(by_link.rate(raw[i]) == by_class.rate(folded[i]));
  }
}
