// The bundled profiles against every published collective table in tests/data/nccl (copies of
// ../shared/data/nccl, each from another fabric: see its README and ../shared/data/PROVENANCE.md).
// Each row of 1 MiB or more is simulated as the simulator runs a collective — the same lowering
// (sim::CollectiveLowering), on a one-collective task graph, over the cluster the table was measured on
// (tests/calibrate/clusters) — and its bus bandwidth, nccl-tests' busbw = bytes / time × 2(n−1)/n for
// all-reduce and (n−1)/n for all-gather, reduce-scatter and all-to-all, compared with the table's.
// A table passes when every such row is within 20%.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

#include "calibrate/cost_model.hpp"
#include "calibrate/profile_yaml.hpp"
#include "sim/scenario.hpp"
#include "sim/simulator.hpp"
#include "tests/workload/fixtures.hpp"

using namespace parasim;
using workload::Collective;

namespace {

struct Row {
  Collective kind = Collective::all_reduce;
  int group = 8;   ///< ranks per group
  int groups = 1;  ///< groups running at once (XLA's replica groups)
  double bytes = 0;
  double busbw = 0;  ///< bytes/s, as published
};

struct Table {
  std::string id;
  std::string cluster;  ///< tests/calibrate/clusters/<cluster>.yaml
  bool nvls = true;     ///< false where the table was measured with NCCL_NVLS_ENABLE=0
  std::vector<Row> rows;
};

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  return s;
}

/// nccl-tests logs: one table per "##"/"####" section; rows "size count type redop root time algbw busbw …",
/// possibly behind an MPI prefix ("0:", "[1,0]<stdout>:"). Returns (section title, rows of size > 0).
std::vector<std::pair<std::string, std::vector<Row>>> nccl_tests_sections(const std::string& path, int group) {
  std::vector<std::pair<std::string, std::vector<Row>>> out;
  for (auto line : lines_of(path)) {
    line = trim(line);
    if (line.rfind("##", 0) == 0) {
      out.push_back({line, {}});
      continue;
    }
    if (const auto colon = line.find(':'); colon != std::string::npos && line.substr(0, colon).find(' ') == std::string::npos && line[0] != '#') {
      line = trim(line.substr(colon + 1));
    }
    if (line.empty() || line[0] == '#' || out.empty()) continue;
    const auto w = words(line);
    if (w.size() < 8 || w[3] != "sum" || w[0].find_first_not_of("0123456789") != std::string::npos) continue;
    const double bytes = std::stod(w[0]);
    if (bytes > 0) out.back().second.push_back({Collective::all_reduce, group, 1, bytes, std::stod(w[7]) * 1e9});
  }
  return out;
}

const std::vector<Row>& section(const std::vector<std::pair<std::string, std::vector<Row>>>& sections, const std::string& title) {
  for (const auto& [t, rows] : sections) {
    if (t.find(title) != std::string::npos) return rows;
  }
  FAIL("no section '" << title << "'");
  return sections.front().second;
}

std::vector<Row> with_group(std::vector<Row> rows, int group) {
  for (auto& r : rows) r.group = group;
  return rows;
}

double payload_bytes(const std::string& s) {
  const auto unit = s.find_first_not_of("0123456789.");
  const double x = std::stod(s.substr(0, unit));
  const std::string u = s.substr(unit);
  return u == "KiB" ? x * 1024 : u == "MiB" ? x * 1048576 : u == "GiB" ? x * 1073741824.0 : x;
}

double gbps(const std::string& s) { return std::stod(s.substr(0, s.find("GBps"))) * 1e9; }

/// Markdown table rows (cells trimmed) of the block after an HTML comment that contains `marker`,
/// up to the next comment; separator rows and the header (its first row) left out.
std::vector<std::vector<std::vector<std::string>>> markdown_tables(const std::vector<std::string>& lines, const std::string& marker) {
  std::vector<std::vector<std::vector<std::string>>> tables;
  bool in_block = false, in_table = false;
  for (const auto& line : lines) {
    if (line.rfind("<!--", 0) == 0) {
      if (in_block) break;
      in_block = line.find(marker) != std::string::npos;
      continue;
    }
    if (!in_block) continue;
    const std::string t = trim(line);
    if (t.empty() || t[0] != '|') {
      in_table = false;
      continue;
    }
    if (!in_table) {
      tables.emplace_back();
      in_table = true;
      continue;  // header
    }
    if (t.find("---") != std::string::npos) continue;
    std::vector<std::string> cells;
    std::stringstream s(t.substr(1));
    std::string cell;
    while (std::getline(s, cell, '|')) cells.push_back(trim(cell));
    tables.back().push_back(cells);
  }
  return tables;
}

std::vector<Table> published_tables() {
  std::vector<Table> t;
  const std::string dir = "tests/data/nccl/";
  // AWS: 2 nodes of 8, EFA.
  const auto aws = nccl_tests_sections(dir + "aws_p4de_p5_2node_all_reduce_perf.txt", 16);
  t.push_back({"aws 2x p4de (16x A100, EFA 4x100G)", "p4de-2node", true, section(aws, "2x p4de")});
  t.push_back({"aws 2x p5 (16x H100, EFA 32x100G)", "p5-2node", true, section(aws, "2x p5.48xlarge (16x H100")});
  t.push_back({"aws 2x p5, EKS (NCCL 2.18.5)", "p5-2node", true, section(aws, "EKS example")});
  // GCP A3 Mega.
  const auto gcp = nccl_tests_sections(dir + "gcp_a3mega_2node_16xH100_all_reduce_perf.txt", 16);
  t.push_back({"gcp 2x A3 Mega (16x H100, TCPXO)", "a3mega-2node", true, section(gcp, "NCCL TEST RESULT")});
  // CoreWeave: 64 H100 with SHARP; GB200 NVL72 racks.
  const auto cw = nccl_tests_sections(dir + "coreweave_h100_64gpu_sharp_and_gb200_nvl72_all_reduce_perf.txt", 0);
  t.push_back({"coreweave 64x H100, IB SHARP", "h100-8node-sharp", true, with_group(section(cw, "Running Jobs"), 64)});
  t.push_back({"coreweave GB200 NVL72, 1 rack", "gb200-nvl72-1rack", true, with_group(section(cw, "Single Rack"), 72)});
  t.push_back({"coreweave GB200 NVL72, 2 racks", "gb200-nvl72-2rack", true, with_group(section(cw, "2 Racks"), 144)});
  t.push_back({"coreweave GB200 NVL72, 20 racks", "gb200-nvl72-20rack", true, with_group(section(cw, "20 Racks"), 1440)});

  // stas00/ml-engineering.
  const auto md = lines_of(dir + "stas00_ml-engineering_collective_bw_tables.md");
  {
    Table a100{"stas00 8x A100 all-reduce", "dgx-a100-1node", true, {}};
    bool in_block = false;
    for (const auto& line : md) {
      if (line.rfind("<!--", 0) == 0) in_block = line.find("A100 8-GPU single node") != std::string::npos;
      const auto w = words(line);
      if (!in_block || w.size() != 4 || w[0].find_first_not_of("0123456789_") != std::string::npos) continue;
      std::string size = w[0];
      size.erase(std::remove(size.begin(), size.end(), '_'), size.end());
      a100.rows.push_back({Collective::all_reduce, 8, 1, std::stod(size), std::stod(w[3]) * 1e9});
    }
    t.push_back(a100);
  }
  {
    Table h200{"stas00 8x H200 all-reduce (torch)", "hgx-h200-1node", true, {}};
    const auto tables = markdown_tables(md, "8x H200 SXM single node");
    for (const auto& r : tables.at(0)) h200.rows.push_back({Collective::all_reduce, 8, 1, payload_bytes(r[0]), gbps(r[1])});
    t.push_back(h200);
  }
  {
    Table one{"stas00 8x B200, 1 node", "b200-1node", true, {}}, four{"stas00 32x B200, 4 nodes (EFA v4)", "p6-b200-4node", true, {}};
    const auto tables = markdown_tables(md, "AWS P6-B200");
    for (const auto& r : tables.at(0)) {
      one.rows.push_back({Collective::all_reduce, 8, 1, payload_bytes(r[0]), gbps(r[1])});
      four.rows.push_back({Collective::all_reduce, 32, 1, payload_bytes(r[0]), gbps(r[2])});
    }
    t.push_back(one);
    t.push_back(four);
  }
  {
    const auto ramps = markdown_tables(md, "NVLS (NVLink SHARP) ramp");
    REQUIRE(ramps.size() == 2);
    const double s = 8.0 * 1073741824.0;
    for (std::size_t i = 0; i < 2; ++i) {
      const std::string gpu = i == 0 ? "H200" : "B200";
      Table nvls{fmt::format("stas00 {} all-reduce 8 GiB on 4-8 GPUs", gpu), i == 0 ? "hgx-h200-1node" : "b200-1node", true, {}};
      Table ring{fmt::format("stas00 {} all-reduce 8 GiB on 4-8 GPUs, NVLS off", gpu), nvls.cluster, false, {}};
      for (const auto& r : ramps[i]) {
        nvls.rows.push_back({Collective::all_reduce, std::stoi(r[0]), 1, s, gbps(r[2])});
        ring.rows.push_back({Collective::all_reduce, std::stoi(r[0]), 1, s, gbps(r[3])});
      }
      t.push_back(nvls);
      t.push_back(ring);
    }
  }
  {
    const double s = 16.0 * 1073741824.0;
    Table nvls{"stas00 8x H200 16 GiB: all-reduce NVLS", "hgx-h200-1node", true, {}};
    Table ring{"stas00 8x H200 16 GiB: ring collectives, NVLS off", "hgx-h200-1node", false, {}};
    const auto tables = markdown_tables(md, "8x H200 16GiB");
    for (const auto& r : tables.at(0)) {
      if (r[0].find("NVLS_ENABLE=1") != std::string::npos) nvls.rows.push_back({Collective::all_reduce, 8, 1, s, gbps(r[2])});
      else if (r[0].find("NVLS_ENABLE=0") != std::string::npos) ring.rows.push_back({Collective::all_reduce, 8, 1, s, gbps(r[2])});
      else if (r[0] == "all-gather") ring.rows.push_back({Collective::all_gather, 8, 1, s, gbps(r[2])});
      else if (r[0] == "reduce-scatter") ring.rows.push_back({Collective::reduce_scatter, 8, 1, s, gbps(r[2])});
    }
    REQUIRE(ring.rows.size() == 3);
    t.push_back(nvls);
    t.push_back(ring);
  }

  // XLA's sm_90 table: four collectives, groups of 8, 4 and 2 on one node; throughput is bytes / time.
  std::map<std::string, Table> xla;
  for (const auto& line : lines_of(dir + "xla_collective_perf_table_sm90_8gpu.csv")) {
    if (line.empty() || line[0] == '#' || line.rfind("arch", 0) == 0) continue;
    std::vector<std::string> c;
    std::stringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ',')) c.push_back(cell);
    // arch, opcode, element_type, dims, num_replica_groups, num_devices_per_group, throughput, full_tensor_bytes, time_ns
    const int groups = std::stoi(c[4]), group = std::stoi(c[5]);
    const Collective kind = c[1] == "all-reduce"       ? Collective::all_reduce
                            : c[1] == "all-gather"     ? Collective::all_gather
                            : c[1] == "reduce-scatter" ? Collective::reduce_scatter
                                                       : Collective::all_to_all;
    const double bytes = std::stod(c[7]), seconds = std::stod(c[8]) * 1e-9;
    const double factor = kind == Collective::all_reduce ? 2.0 * (group - 1) / group : (group - 1.0) / group;
    auto& table = xla[fmt::format("xla sm_90 {} in {} group{} of {}", c[1], groups, groups > 1 ? "s" : "", group)];
    table.cluster = "dgx-h100-1node";
    table.rows.push_back({kind, group, groups, bytes, bytes / seconds * factor});
  }
  for (auto& [id, table] : xla) {
    table.id = id;
    t.push_back(table);
  }
  return t;
}

calibrate::CollectiveKind kind_of(Collective c) {
  switch (c) {
    case Collective::all_reduce: return calibrate::CollectiveKind::all_reduce;
    case Collective::all_gather: return calibrate::CollectiveKind::all_gather;
    case Collective::reduce_scatter: return calibrate::CollectiveKind::reduce_scatter;
    case Collective::all_to_all: return calibrate::CollectiveKind::all_to_all;
    case Collective::send_recv: return calibrate::CollectiveKind::send_recv;
  }
  return calibrate::CollectiveKind::all_reduce;
}

struct Outcome {
  std::vector<std::string> lines;  ///< every row: published and predicted
  std::size_t rows = 0;
  double median = 0, worst = 0;
  std::string worst_row;
};

/// The table's rows of 1 MiB or more, simulated on its cluster with the bundled profile of its GPU.
Outcome predict(const Table& table) {
  const auto scenario = sim::load_scenario("tests/calibrate/clusters/" + table.cluster + ".yaml");
  const topology::Cluster cluster(scenario.cluster);
  auto profile = calibrate::default_profile(scenario.cluster.node.gpu.name);
  if (!table.nvls) profile.nvls = false;
  const calibrate::CostModel cost(scenario.cluster.node.gpu, profile);
  const auto model = test::small_gpt(4);
  const auto training = test::training(1024);
  const auto plan = test::plan(1, 1, 1, 1, 1);
  std::vector<double> errors;
  Outcome o;
  for (const auto& row : table.rows) {
    if (row.bytes < 1048576.0) continue;
    workload::TaskGraph g;
    workload::Task task;
    task.kind = workload::TaskKind::collective;
    task.collective = row.kind;
    task.dim = workload::CommDim::dp;
    task.stream = workload::Stream::dp_comm;
    task.bytes = row.bytes;
    std::vector<std::vector<int>> twins;
    for (int k = 0; k < row.groups; ++k) {
      twins.emplace_back();
      for (int r = 0; r < row.group; ++r) twins.back().push_back(k * row.group + r);
    }
    g.groups.push_back(twins.front());
    g.twins.emplace_back(twins);
    g.tasks.push_back(task);
    const sim::SimInput in{&cluster, &model, &training, &plan, &g, &cost};
    const double seconds = sim::simulate(in).iteration.value();
    const double predicted = calibrate::bus_bandwidth(kind_of(row.kind), row.group, row.bytes, Seconds(seconds));
    const double error = predicted / row.busbw - 1;
    errors.push_back(std::fabs(error));
    o.lines.push_back(fmt::format("  {} x{}{} {:>9.1f} MiB: published {:7.1f} GB/s, predicted {:7.1f} GB/s ({:+.1f}%)", workload::collective_name(row.kind),
                                  row.group, row.groups > 1 ? fmt::format(" ({} groups)", row.groups) : "", row.bytes / 1048576.0, row.busbw / 1e9,
                                  predicted / 1e9, 100 * error));
    if (std::fabs(error) >= o.worst) {
      o.worst = std::fabs(error);
      o.worst_row = fmt::format("{} x{} {:.0f} MiB: published {:.1f} GB/s, predicted {:.1f} GB/s ({:+.1f}%)",
                                workload::collective_name(row.kind), row.group, row.bytes / 1048576.0, row.busbw / 1e9, predicted / 1e9, 100 * error);
    }
  }
  std::sort(errors.begin(), errors.end());
  o.rows = errors.size();
  o.median = errors.empty() ? 0 : errors[errors.size() / 2];
  return o;
}

// Tables the bundled profiles miss by more than 20% somewhere at 1 MiB and above, as of this test's
// writing; every row's figures print with PARASIM_TABLE_ROWS=1 parasim_unit_tests -tc="*published collective*".
// A table that starts to pass fails this test until it is taken off the list.
const std::vector<std::string> kKnownMisses = {
    // EFA: 161 us at 8 B, busbw climbing from 6 to 78 GB/s over 1 MiB-2 GiB where the model reaches 64 by 16 MiB (+122…+162% at 1-16 MiB).
    "aws 2x p4de (16x A100, EFA 4x100G)",
    // EFA: the same slow climb up to 1 GiB (+24…+89% at 1-512 MiB); what EFA / aws-ofi-nccl cost per message is not modelled.
    "aws 2x p5 (16x H100, EFA 32x100G)",
    // Same hardware as the p5 table above but 1.4-2.2x slower from 64 MiB to 1 GiB (NCCL 2.18.5 on EKS): a set-up the cluster does not describe.
    "aws 2x p5, EKS (NCCL 2.18.5)",
    // TCPXO (GPUDirect-TCPXO): 1-128 MiB 2-5x slower than predicted; what TCPXO costs per message is not modelled.
    "gcp 2x A3 Mega (16x H100, TCPXO)",
    // 151-406 GB/s over 20 racks against the rack's NVLS rate: what the cross-rack tree costs at that depth is not modelled.
    "coreweave GB200 NVL72, 20 racks",
    // 1, 2 and 4 MiB all take 101 us and 16 MiB twice 8 MiB's time; the NVLink figures are fitted on this very sweep (mean log error), which trades these rows.
    "stas00 8x A100 all-reduce",
    // NCCL 2.27 with AWS's tuner takes NVLS from 4 MiB (4-16 MiB match NVLS's 80 us fixed cost within 8%) where the simulator takes the faster ring.
    "stas00 8x B200, 1 node",
    // EFA: 1-256 MiB at 0.32-0.56 of the predicted busbw (as the AWS tables); 1-16 GiB +22…+24%.
    "stas00 32x B200, 4 nodes (EFA v4)",
    // 1 and 2 MiB both take 31 us: below 10 us launch + 7 steps x 5.7 us (Simple, fitted on nccl-tests A100); LL128 tried, see fidelity.md.
    "xla sm_90 all-gather in 1 group of 8",
    // 1 MiB −35% (latency, as one group of 8); 8 MiB +22%: the 4-rank groups take as long as one group of 8 at 4-16 MiB (the model: 3 steps against 7).
    "xla sm_90 all-gather in 2 groups of 4",
    // Four groups of 2 at once reach 78% of one group of 8 (275 vs 352 GB/s at 2 GiB); a lone 4-GPU ring matches 8 GPUs (stas00 H200 ramp), so not the ring size.
    "xla sm_90 all-gather in 4 groups of 2",
    // Two groups at once: 302 GB/s at 2 GiB against 363 for a lone 4-GPU ring on H200 (stas00 ramp); concurrency of groups not modelled.
    "xla sm_90 all-reduce in 2 groups of 4",
    // Four groups at once: 250 GB/s at 2 GiB (+46…+65% at 8 MiB-2 GiB); concurrency of groups not modelled.
    "xla sm_90 all-reduce in 4 groups of 2",
    // The 1 MiB row (55 us) is slower than 2 MiB (25 us); 2-4 MiB would need one step of latency for the grouped sends, which 1 MiB forbids.
    "xla sm_90 all-to-all in 1 group of 8",
    // 4-64 MiB +38…+70%: two groups at once, as the all-gather.
    "xla sm_90 all-to-all in 2 groups of 4",
    // 1-256 MiB +35…+154%: four groups at once, as the all-gather.
    "xla sm_90 all-to-all in 4 groups of 2",
    // 1 MiB in 20 us and 4 MiB in 36 us: below 10 us launch + 7 Simple steps; XLA's timing of short collectives.
    "xla sm_90 reduce-scatter in 1 group of 8",
    // 32 MiB-2 GiB +26…+35%: two groups at once (287 GB/s at 2 GiB against 329 for one group of 8).
    "xla sm_90 reduce-scatter in 2 groups of 4",
    // 2 MiB-2 GiB +43…+105%: four groups at once reach 205 GB/s at 2 GiB.
    "xla sm_90 reduce-scatter in 4 groups of 2",
};

}  // namespace

TEST_CASE("the bundled profiles against every published collective table, rows of 1 MiB and more within 20%") {
  const auto tables = published_tables();
  CHECK(tables.size() == 30);
  std::size_t passed = 0;
  for (const auto& table : tables) {
    CAPTURE(table.id);
    REQUIRE_FALSE(table.rows.empty());
    const auto o = predict(table);
    const bool pass = o.worst <= 0.20;
    passed += pass;
    MESSAGE(fmt::format("{:<58} {:>3} rows  median {:5.1f}%  worst {:6.1f}%  {}{}", table.id, o.rows, 100 * o.median, 100 * o.worst,
                        pass ? "pass" : "MISS", pass ? "" : ": worst " + o.worst_row));
    if (std::getenv("PARASIM_TABLE_ROWS")) {
      for (const auto& line : o.lines) MESSAGE(line);
    }
    const bool known = std::find(kKnownMisses.begin(), kKnownMisses.end(), table.id) != kKnownMisses.end();
    if (!known) CHECK_MESSAGE(pass, table.id << ": worst " << o.worst_row);
    if (known) CHECK_MESSAGE(!pass, table.id << " now passes: take it off kKnownMisses");
  }
  MESSAGE(passed << " of " << tables.size() << " tables pass");
}

TEST_CASE("two published tables no model can match within 20% at once: the set's limit, measured") {
  // Within 20% of a published busbw means a predicted time in [t/1.2, t/0.8]. Two rows whose times
  // are further apart than that allows cannot both pass under any model that gives the same inputs
  // the same time (or a larger message no less time).
  const auto tables = published_tables();
  auto table = [&](const std::string& id) -> const Table& {
    const auto it = std::find_if(tables.begin(), tables.end(), [&](const Table& t) { return t.id == id; });
    REQUIRE(it != tables.end());
    return *it;
  };
  // The same instance type, two p5.48xlarge (AWS's README, two runs): at 128 MiB 289.2 against 129.0 GB/s.
  const auto& p5 = table("aws 2x p5 (16x H100, EFA 32x100G)");
  const auto& eks = table("aws 2x p5, EKS (NCCL 2.18.5)");
  double widest = 0;
  for (const auto& a : p5.rows) {
    for (const auto& b : eks.rows) {
      if (a.bytes == b.bytes && a.bytes >= 1048576.0) widest = std::max(widest, a.busbw / b.busbw);
    }
  }
  CHECK(widest == doctest::Approx(289.16 / 129.02).epsilon(0.001).scale(0));
  CHECK(widest > 1.2 / 0.8);
  // XLA's 8-rank all-to-all moves 1 MiB in 55 us and 2 MiB in 25 us: a model where the larger message
  // takes no less time has to miss one of them by more than 20%.
  const auto& a2a = table("xla sm_90 all-to-all in 1 group of 8");
  auto seconds = [](const Row& r) { return r.bytes * (r.group - 1.0) / r.group / r.busbw; };
  const auto one = std::find_if(a2a.rows.begin(), a2a.rows.end(), [](const Row& r) { return r.bytes == 1048576.0; });
  const auto two = std::find_if(a2a.rows.begin(), a2a.rows.end(), [](const Row& r) { return r.bytes == 2097152.0; });
  REQUIRE(one != a2a.rows.end());
  REQUIRE(two != a2a.rows.end());
  CHECK(seconds(*one) / 1.2 > seconds(*two) / 0.8);
}
