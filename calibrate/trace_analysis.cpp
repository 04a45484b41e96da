#include "calibrate/trace_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace parasim::calibrate {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::int64_t product(const std::vector<std::int64_t>& d, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

bool valid(const std::vector<std::int64_t>& d) {
  return !d.empty() && std::all_of(d.begin(), d.end(), [](std::int64_t x) { return x > 0; });
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Ops of one trace with their enclosing op, and the op that made each launch.
struct Nesting {
  std::vector<std::int32_t> parent;                              ///< per op
  std::unordered_map<std::int64_t, std::int32_t> launch_op;      ///< correlation -> innermost op
  std::unordered_map<std::int64_t, std::int32_t> op_by_external; ///< External id -> op
};

Nesting nest(const KinetoTrace& t) {
  Nesting n;
  n.parent.assign(t.ops.size(), -1);
  std::map<std::uint32_t, std::vector<std::int32_t>> ops_by_thread;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    ops_by_thread[t.ops[i].thread].push_back(static_cast<std::int32_t>(i));
    if (t.ops[i].external_id >= 0) n.op_by_external.try_emplace(t.ops[i].external_id, static_cast<std::int32_t>(i));
  }
  std::map<std::uint32_t, std::vector<std::size_t>> launches_by_thread;
  for (std::size_t i = 0; i < t.launches.size(); ++i) launches_by_thread[t.launches[i].thread].push_back(i);
  auto end = [&](std::int32_t op) { return t.ops[static_cast<std::size_t>(op)].start_ns + t.ops[static_cast<std::size_t>(op)].dur_ns; };
  for (auto& entry : ops_by_thread) {
    const std::uint32_t thread = entry.first;
    auto& ops = entry.second;  // a named reference: lambdas below capture it (clang 14 cannot capture a structured binding)
    std::sort(ops.begin(), ops.end(), [&](std::int32_t a, std::int32_t b) {
      const auto& x = t.ops[static_cast<std::size_t>(a)];
      const auto& y = t.ops[static_cast<std::size_t>(b)];
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.dur_ns != y.dur_ns ? x.dur_ns > y.dur_ns : a < b;
    });
    auto& launches = launches_by_thread[thread];
    std::sort(launches.begin(), launches.end(), [&](std::size_t a, std::size_t b) { return t.launches[a].ts_ns < t.launches[b].ts_ns; });
    std::vector<std::int32_t> stack;
    std::size_t next = 0;
    auto push_until = [&](std::int64_t time) {
      while (next < ops.size() && t.ops[static_cast<std::size_t>(ops[next])].start_ns <= time) {
        const std::int32_t op = ops[next++];
        const auto start = t.ops[static_cast<std::size_t>(op)].start_ns;
        while (!stack.empty() && end(stack.back()) < start) stack.pop_back();
        n.parent[static_cast<std::size_t>(op)] = stack.empty() ? -1 : stack.back();
        stack.push_back(op);
      }
    };
    for (std::size_t l : launches) {
      const auto ts = t.launches[l].ts_ns;
      push_until(ts);
      while (!stack.empty() && end(stack.back()) < ts) stack.pop_back();
      if (!stack.empty()) n.launch_op.try_emplace(t.launches[l].correlation, stack.back());
    }
    push_until(std::numeric_limits<std::int64_t>::max());
  }
  return n;
}

std::vector<std::vector<std::int64_t>> dims_of(const KinetoTrace& t, const HostOp& op) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::uint32_t i = 0; i < op.inputs; ++i) {
    const auto& in = t.inputs[op.inputs_offset + i];
    out.emplace_back(t.dims.begin() + in.dims_offset, t.dims.begin() + in.dims_offset + in.rank);
  }
  return out;
}

std::string_view dtype_of(const KinetoTrace& t, const HostOp& op, std::uint32_t input) {
  if (input >= op.inputs) return {};
  return t.string(t.inputs[op.inputs_offset + input].dtype);
}

std::optional<Precision> precision_of_dtype(std::string_view type) {
  const std::string s = lower(type);
  if (s == "float" || s == "float32") return Precision::fp32;
  if (s.find("bfloat16") != std::string::npos) return Precision::bf16;
  if (s.find("half") != std::string::npos) return Precision::fp16;
  if (s.find("float8") != std::string::npos) return Precision::fp8;
  return std::nullopt;
}

/// Bytes per element of a dtype as record_param_comms writes it ("Float", "BFloat16", "Byte").
int metadata_dtype_bytes(std::string_view type) {
  const std::string s = lower(type);
  if (s == "float" || s == "int") return 4;
  if (s == "double" || s == "long") return 8;
  if (s == "bfloat16" || s == "half" || s == "short") return 2;
  if (s == "byte" || s == "char" || s == "bool" || s.rfind("float8", 0) == 0) return 1;
  return 0;
}

std::optional<CollectiveKind> kind_of_host_op(std::string_view name) {
  // nccl:all_reduce, nccl:_all_gather_base, nccl:all_to_all, c10d::allreduce_, c10d::_reduce_scatter_base_, …
  const std::string s = lower(name);
  if (s.find("all_to_all") != std::string::npos || s.find("alltoall") != std::string::npos) return CollectiveKind::all_to_all;
  if (s.find("reduce_scatter") != std::string::npos || s.find("reducescatter") != std::string::npos) return CollectiveKind::reduce_scatter;
  if (s.find("all_gather") != std::string::npos || s.find("allgather") != std::string::npos) return CollectiveKind::all_gather;
  if (s.find("all_reduce") != std::string::npos || s.find("allreduce") != std::string::npos) return CollectiveKind::all_reduce;
  if (s.find("broadcast") != std::string::npos) return CollectiveKind::broadcast;
  if (s.find("send") != std::string::npos || s.find("recv") != std::string::npos) return CollectiveKind::send_recv;
  if (s.find("reduce") != std::string::npos) return CollectiveKind::reduce;
  return std::nullopt;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

struct Interval {
  std::int64_t start, end;
};

/// Merged, sorted intervals.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const auto& x : v) {
    if (!out.empty() && x.start <= out.back().end) {
      out.back().end = std::max(out.back().end, x.end);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

/// Nanoseconds of [start, end) covered by merged intervals.
std::int64_t covered(const std::vector<Interval>& u, std::int64_t start, std::int64_t end) {
  auto it = std::upper_bound(u.begin(), u.end(), start, [](std::int64_t t, const Interval& x) { return t < x.end; });
  std::int64_t sum = 0;
  for (; it != u.end() && it->start < end; ++it) sum += std::min(end, it->end) - std::max(start, it->start);
  return sum;
}

ComputeKind compute_kind_of(KernelClass c) {
  switch (c) {
    case KernelClass::gemm:
    case KernelClass::convolution: return ComputeKind::gemm;
    case KernelClass::attention: return ComputeKind::attention;
    default: return ComputeKind::memory_bound;
  }
}

bool is_compute(KernelClass c) {
  return c == KernelClass::gemm || c == KernelClass::convolution || c == KernelClass::attention || c == KernelClass::elementwise ||
         c == KernelClass::reduction;
}

/// One rank's collectives in launch order, and the size of its job.
struct RankCollectives {
  int world_size = 0;
  std::vector<CollectiveSample> samples;
};

/// A collective's kernel on one rank includes the time it waited for the others; the last rank to
/// arrive waits for nobody. Traces of several ranks of one job are matched collective by collective
/// (the j-th of each kind, size and group size on each rank) and each is timed by its fastest rank.
void match_across_ranks(std::vector<RankCollectives>& ranks, TraceAnalysis& a) {
  std::map<int, std::vector<std::size_t>> jobs;  // world size -> files
  for (std::size_t i = 0; i < ranks.size(); ++i) jobs[ranks[i].world_size].push_back(i);
  std::size_t matched = 0, files = 0;
  for (const auto& [world, members] : jobs) {
    using Key = std::tuple<int, double, int>;
    if (world < 2 || members.size() < 2) {
      for (auto i : members) {
        for (auto& c : ranks[i].samples) a.measurements.collectives.push_back(std::move(c));
      }
      continue;
    }
    std::map<Key, std::vector<std::vector<std::size_t>>> occurrences;  // key -> per member, indices in order
    for (std::size_t m = 0; m < members.size(); ++m) {
      const auto& samples = ranks[members[m]].samples;
      for (std::size_t j = 0; j < samples.size(); ++j) {
        auto& per_member = occurrences[{static_cast<int>(samples[j].kind), samples[j].bytes, samples[j].ranks}];
        per_member.resize(members.size());
        per_member[m].push_back(j);
      }
    }
    std::vector<std::vector<bool>> used(members.size());
    for (std::size_t m = 0; m < members.size(); ++m) used[m].assign(ranks[members[m]].samples.size(), false);
    for (const auto& [key, per_member] : occurrences) {
      std::size_t common = std::numeric_limits<std::size_t>::max();
      for (const auto& list : per_member) common = std::min(common, list.size());
      for (std::size_t j = 0; j < common; ++j) {
        std::size_t best_m = 0;
        double best = std::numeric_limits<double>::infinity();
        for (std::size_t m = 0; m < members.size(); ++m) {
          const auto& c = ranks[members[m]].samples[per_member[m][j]];
          used[m][per_member[m][j]] = true;
          if (c.seconds < best) {
            best = c.seconds;
            best_m = m;
          }
        }
        a.measurements.collectives.push_back(ranks[members[best_m]].samples[per_member[best_m][j]]);
        ++matched;
      }
    }
    for (std::size_t m = 0; m < members.size(); ++m) {
      for (std::size_t j = 0; j < used[m].size(); ++j) {
        if (!used[m][j]) a.measurements.collectives.push_back(ranks[members[m]].samples[j]);
      }
    }
    files += members.size();
  }
  if (matched > 0) {
    a.notes.push_back(fmt::format("{} collectives matched across the {} ranks' traces: each timed by its fastest rank (the others waited for it)",
                                  matched, files));
  } else if (!a.measurements.collectives.empty()) {
    a.notes.push_back("collective kernels of one rank include the time they waited for the other ranks: give every rank's trace to time them");
  }
}

}  // namespace

int dtype_bytes(std::string_view type) {
  const std::string s = lower(type);
  if (s == "float" || s == "int" || s == "unsigned int" || s == "float32") return 4;
  if (s == "double" || s == "long" || s == "long int" || s == "long long" || s == "unsigned long") return 8;
  if (s == "short" || s.find("half") != std::string::npos || s.find("bfloat16") != std::string::npos) return 2;
  if (s == "bool" || s == "unsigned char" || s == "signed char" || s == "char" || s.find("float8") != std::string::npos) return 1;
  return 0;
}

std::optional<GemmShape> gemm_shape(std::string_view op, const std::vector<std::vector<std::int64_t>>& d) {
  auto two = [&](std::size_t a, std::size_t b) -> std::optional<GemmShape> {
    if (d.size() <= std::max(a, b) || d[a].size() != 2 || d[b].size() != 2 || !valid(d[a]) || !valid(d[b])) return std::nullopt;
    return GemmShape{1, d[a][0], d[b][1], d[a][1]};
  };
  auto batched = [&](std::size_t a, std::size_t b) -> std::optional<GemmShape> {
    if (d.size() <= std::max(a, b) || d[a].size() != 3 || d[b].size() != 3 || !valid(d[a]) || !valid(d[b])) return std::nullopt;
    return GemmShape{d[a][0], d[a][1], d[b][2], d[a][2]};
  };
  if (op == "aten::mm" || op == "aten::_scaled_mm") return two(0, 1);
  if (op == "aten::addmm") return two(1, 2);
  if (op == "aten::bmm") return batched(0, 1);
  if (op == "aten::baddbmm") return batched(1, 2);
  if (op == "aten::linear") {
    if (d.size() < 2 || d[0].empty() || d[1].size() != 2 || !valid(d[0]) || !valid(d[1])) return std::nullopt;
    return GemmShape{1, product(d[0], 0, d[0].size() - 1), d[1][0], d[0].back()};
  }
  if (op == "aten::matmul") {
    if (d.size() < 2 || d[0].size() < 2 || d[1].size() < 2 || !valid(d[0]) || !valid(d[1])) return std::nullopt;
    const auto& a = d[0];
    const auto& b = d[1];
    if (b.size() == 2) return GemmShape{1, product(a, 0, a.size() - 1), b[1], a.back()};
    return GemmShape{product(a, 0, a.size() - 2), a[a.size() - 2], b.back(), a.back()};
  }
  return std::nullopt;
}

NcclKernelName parse_nccl_kernel_name(std::string_view name) {
  NcclKernelName out;
  name = name.substr(0, name.find('('));
  std::vector<std::string> tokens;
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto u = name.find('_', start);
    tokens.emplace_back(name.substr(start, u == std::string_view::npos ? std::string_view::npos : u - start));
    if (u == std::string_view::npos) break;
    start = u + 1;
  }
  static const std::pair<std::string_view, CollectiveKind> kinds[] = {
      {"AllReduce", CollectiveKind::all_reduce}, {"AllGather", CollectiveKind::all_gather}, {"ReduceScatter", CollectiveKind::reduce_scatter},
      {"Broadcast", CollectiveKind::broadcast},  {"Reduce", CollectiveKind::reduce},         {"SendRecv", CollectiveKind::send_recv},
      {"AllToAll", CollectiveKind::all_to_all},  {"Send", CollectiveKind::send_recv},        {"Recv", CollectiveKind::send_recv}};
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& tok = tokens[i];
    for (const auto& [text, kind] : kinds) {
      if (!out.kind && tok == text) out.kind = kind;
    }
    if (out.algorithm.empty()) {
      if (tok == "COLLNET" || tok == "NVLS") {
        const bool two = i + 1 < tokens.size() && (tokens[i + 1] == "DIRECT" || tokens[i + 1] == "CHAIN" || tokens[i + 1] == "TREE");
        out.algorithm = lower(two ? tok + "_" + tokens[i + 1] : tok);
        if (two) ++i;
        continue;
      }
      if (tok == "RING" || tok == "TREE" || tok == "PAT") {
        out.algorithm = lower(tok);
        continue;
      }
    }
    if (out.protocol.empty() && (tok == "LL" || tok == "LL128" || tok == "SIMPLE")) out.protocol = tok;
  }
  return out;
}

namespace {

// One GEMM host op's kernels: its shape and format, and their time.
struct GemmAccumulator {
  GemmShape shape;
  Precision precision = Precision::fp32;
  std::int64_t ns = 0;
  int kernels = 0;
  bool tf32 = false;
};

// One collective: its sample, and when and where its kernels ran.
struct CommAccumulator {
  CollectiveSample sample;
  bool sized = false;
  std::int64_t ns = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  int device = 0;
  std::uint32_t name = 0;
};

// What one trace's pass over its GPU events gathers.
struct TraceJoin {
  const KinetoTrace& t;
  Nesting nesting;
  bool intra = true;  // the job fits in one node: its groups stay on NVLink / PCIe
  std::map<std::int32_t, GemmAccumulator> gemm_ops;                    // by op, in op order (deterministic)
  std::map<std::int32_t, std::pair<std::int64_t, int>> elementwise_ops;  // op -> (ns, kernels)
  std::vector<CommAccumulator> comms;
  std::map<std::int32_t, std::size_t> comm_by_op;
  std::map<int, std::vector<Interval>> nccl_by_device, compute_by_device;

  TraceJoin(const KinetoTrace& trace, const TraceAnalysisOptions& options)
      : t(trace), nesting(nest(trace)), intra(trace.world_size.value_or(1) <= options.gpus_per_node) {}

  // The op that launched a GPU event, or -1.
  std::int32_t op_of(const GpuEvent& g) const {
    if (auto it = nesting.launch_op.find(g.correlation); it != nesting.launch_op.end()) return it->second;
    if (g.external_id >= 0 && g.external_id != g.correlation) {
      if (auto it = nesting.op_by_external.find(g.external_id); it != nesting.op_by_external.end()) return it->second;
    }
    return -1;
  }
  const HostOp& host(std::int32_t op) const { return t.ops[static_cast<std::size_t>(op)]; }
  std::int32_t parent(std::int32_t op) const { return nesting.parent[static_cast<std::size_t>(op)]; }
};

// A GEMM kernel joins the innermost enclosing GEMM op with dims; the op's kernels are one GEMM.
void add_gemm_kernel(TraceJoin& j, const GpuEvent& g, std::int32_t op, TraceAnalysis& a) {
  ++a.gemm_kernels;
  const auto& t = j.t;
  for (std::int32_t o = op; o >= 0; o = j.parent(o)) {
    const auto& host = j.host(o);
    if (!host.has_dims) continue;
    const auto shape = gemm_shape(t.string(host.name), dims_of(t, host));
    if (!shape) continue;
    const auto p = precision_of_dtype(dtype_of(t, host, t.string(host.name) == "aten::addmm" || t.string(host.name) == "aten::baddbmm" ? 1 : 0));
    if (!p) break;
    auto& acc = j.gemm_ops[o];
    acc.shape = *shape;
    acc.precision = *p;
    acc.ns += g.dur_ns;
    ++acc.kernels;
    const std::string kname = lower(t.string(g.name));
    if (kname.find("tf32") != std::string::npos || kname.find("s1688") != std::string::npos || kname.find("xmma") != std::string::npos) {
      acc.tf32 = true;
    }
    ++a.gemm_kernels_with_shape;
    break;
  }
}

// The host ops around a collective's launch: nccl:*, c10d::*, and its metadata (record_param_comms).
struct CommHostOps {
  std::int32_t nccl = -1, c10d = -1;
  const CommMetadata* meta = nullptr;
};

CommHostOps comm_host_ops(const TraceJoin& j, const GpuEvent& g, std::int32_t op) {
  const auto& t = j.t;
  CommHostOps h;
  h.meta = g.comm >= 0 ? &t.comm[static_cast<std::size_t>(g.comm)] : nullptr;
  for (std::int32_t o = op; o >= 0; o = j.parent(o)) {
    const auto& host = j.host(o);
    const auto& name = t.string(host.name);
    if (h.nccl < 0 && starts_with(name, "nccl:")) h.nccl = o;
    if (h.c10d < 0 && starts_with(name, "c10d::")) h.c10d = o;
    if (!h.meta && host.comm >= 0) h.meta = &t.comm[static_cast<std::size_t>(host.comm)];
  }
  return h;
}

std::int64_t numel(const std::vector<std::int64_t>& d) { return valid(d) ? product(d, 0, d.size()) : std::int64_t{0}; }

bool gather_like(CollectiveKind k) { return k == CollectiveKind::all_gather || k == CollectiveKind::reduce_scatter; }

// Group size: the metadata's, else the all-gather / reduce-scatter in/out ratio, else the trace's
// only process group, else the world size (noted once), and 2 for a send or receive.
int group_size(const TraceJoin& j, const CommHostOps& h, CollectiveKind kind, const std::vector<std::vector<std::int64_t>>& c10d_dims,
               bool& noted_guess, TraceAnalysis& a) {
  const auto& t = j.t;
  int ranks = h.meta && h.meta->group_size > 1 ? h.meta->group_size : 0;
  if (ranks == 0 && gather_like(kind) && c10d_dims.size() >= 2) {
    const auto x = numel(c10d_dims[0]), y = numel(c10d_dims[1]);
    if (x > 0 && y > 0 && std::max(x, y) % std::min(x, y) == 0 && std::max(x, y) / std::min(x, y) > 1) {
      ranks = static_cast<int>(std::max(x, y) / std::min(x, y));
    }
  }
  if (ranks == 0 && t.groups.size() == 1 && t.groups.front().size > 1) ranks = t.groups.front().size;
  if (ranks == 0 && t.world_size.value_or(0) > 1) {
    ranks = *t.world_size;
    if (!noted_guess) {
      a.notes.push_back("group size of some collectives not recorded: taken as the world size");
      noted_guess = true;
    }
  }
  if (kind == CollectiveKind::send_recv) ranks = 2;
  return ranks;
}

// Size in the nccl-tests convention: the metadata's elements, else the c10d op's larger tensor,
// else the nccl:* op's input (an all-gather's times the group).
double collective_bytes(const TraceJoin& j, const CommHostOps& h, CollectiveKind kind, int ranks,
                        const std::vector<std::vector<std::int64_t>>& c10d_dims) {
  const auto& t = j.t;
  double bytes = 0;
  if (h.meta && h.meta->in_elements >= 0 && metadata_dtype_bytes(h.meta->dtype) > 0) {
    const double e = metadata_dtype_bytes(h.meta->dtype);
    const double in = static_cast<double>(h.meta->in_elements) * e, out = static_cast<double>(std::max<std::int64_t>(0, h.meta->out_elements)) * e;
    bytes = gather_like(kind) ? std::max(in, out) : in;
  }
  if (bytes == 0 && gather_like(kind) && c10d_dims.size() >= 2) {
    const int e = dtype_bytes(dtype_of(t, j.host(h.c10d), 0));
    bytes = static_cast<double>(std::max(numel(c10d_dims[0]), numel(c10d_dims[1]))) * e;
  }
  if (bytes == 0 && h.nccl >= 0 && j.host(h.nccl).has_dims) {
    const auto& host = j.host(h.nccl);
    const auto d = dims_of(t, host);
    const int e = dtype_bytes(dtype_of(t, host, 0));
    if (!d.empty() && e > 0) {
      bytes = static_cast<double>(numel(d[0])) * e;
      if (kind == CollectiveKind::all_gather && ranks > 1) bytes *= ranks;  // nccl:_all_gather_base records its input
    }
  }
  return bytes;
}

// An NCCL kernel as a collective: its kind from the kernel's name refined by the host op, its
// algorithm and protocol from the name, its group and size from the host ops.
CommAccumulator collective_of(const TraceJoin& j, const GpuEvent& g, std::int32_t op, bool& noted_guess, TraceAnalysis& a) {
  const auto& t = j.t;
  const auto parsed = parse_nccl_kernel_name(t.string(g.name));
  CommAccumulator c;
  c.sample.kind = parsed.kind.value_or(CollectiveKind::all_reduce);
  c.sample.algorithm = parsed.algorithm;
  c.sample.protocol = parsed.protocol;
  c.sample.intra_node = j.intra;
  c.ns = g.dur_ns;
  c.start_ns = g.start_ns;
  c.end_ns = g.start_ns + g.dur_ns;
  c.device = g.device;
  c.name = g.name;
  const CommHostOps h = comm_host_ops(j, g, op);
  const std::int32_t kind_op = h.nccl >= 0 ? h.nccl : h.c10d;
  if (kind_op >= 0) {
    if (auto k = kind_of_host_op(t.string(j.host(kind_op).name))) c.sample.kind = *k;
  } else if (h.meta && !h.meta->collective.empty()) {
    if (auto k = kind_of_host_op(h.meta->collective)) c.sample.kind = *k;
  }
  std::vector<std::vector<std::int64_t>> c10d_dims;
  if (h.c10d >= 0 && j.host(h.c10d).has_dims) c10d_dims = dims_of(t, j.host(h.c10d));
  c.sample.ranks = group_size(j, h, c.sample.kind, c10d_dims, noted_guess, a);
  c.sample.bytes = collective_bytes(j, h, c.sample.kind, c.sample.ranks, c10d_dims);
  c.sized = c.sample.bytes > 0 && c.sample.ranks >= 2;
  return c;
}

void add_nccl_kernel(TraceJoin& j, const GpuEvent& g, std::int32_t op, bool& noted_guess, TraceAnalysis& a) {
  ++a.nccl_kernels;
  j.nccl_by_device[g.device].push_back({g.start_ns, g.start_ns + g.dur_ns});
  CommAccumulator c = collective_of(j, g, op, noted_guess, a);
  if (c.sized) ++a.nccl_kernels_with_size;
  if (op >= 0) {
    // Several kernels of one op (coalesced groups) are one collective.
    if (auto it = j.comm_by_op.find(op); it != j.comm_by_op.end()) {
      auto& prev = j.comms[it->second];
      prev.ns += c.ns;
      prev.end_ns = std::max(prev.end_ns, c.end_ns);
      return;
    }
    j.comm_by_op.emplace(op, j.comms.size());
  }
  j.comms.push_back(std::move(c));
}

// Every GPU event of the trace counted, joined to its host op and accumulated by what it is.
void join_events(TraceJoin& j, TraceFileSummary& summary, bool& noted_guess, TraceAnalysis& a) {
  const auto& t = j.t;
  for (const auto& g : t.gpu) {
    summary.totals.add(g.klass, g.dur_ns);
    a.totals.add(g.klass, g.dur_ns);
    if (summary.gpu.empty()) {
      for (const auto& d : t.devices) {
        if (d.id == g.device) summary.gpu = d.name;
      }
    }
    const bool kernel = g.klass != KernelClass::memcpy && g.klass != KernelClass::memset;
    const std::int32_t op = j.op_of(g);
    if (kernel) {
      ++a.kernels;
      if (op >= 0) ++a.kernels_with_op;
    }
    if (g.klass == KernelClass::memcpy && g.bytes > 0 && t.string(g.name).find("DtoD") != std::string::npos && g.dur_ns > 0) {
      a.measurements.memory.push_back({"copy", 2.0 * g.bytes, static_cast<double>(g.dur_ns) * 1e-9});
    }
    if (g.klass == KernelClass::gemm) add_gemm_kernel(j, g, op, a);
    if ((g.klass == KernelClass::elementwise || g.klass == KernelClass::reduction) && op >= 0 && j.host(op).has_dims) {
      auto& e = j.elementwise_ops[op];
      e.first += g.dur_ns;
      ++e.second;
    }
    if (g.klass == KernelClass::nccl) add_nccl_kernel(j, g, op, noted_guess, a);
    if (is_compute(g.klass)) j.compute_by_device[g.device].push_back({g.start_ns, g.start_ns + g.dur_ns});
  }
}

void add_gemm_measurements(const TraceJoin& j, TraceAnalysis& a) {
  for (const auto& [op, acc] : j.gemm_ops) {
    Precision p = acc.precision;
    if (p == Precision::fp32 && acc.tf32) p = Precision::tf32;
    a.measurements.gemms.push_back({p, acc.shape.batch, acc.shape.m, acc.shape.n, acc.shape.k, static_cast<double>(acc.ns) * 1e-9, acc.kernels});
  }
}

// An elementwise op of one kernel moved its tensor inputs and an output as large as the largest.
void add_elementwise_measurements(const TraceJoin& j, TraceAnalysis& a) {
  const auto& t = j.t;
  for (const auto& [op, e] : j.elementwise_ops) {
    if (e.second != 1) continue;  // an op of several kernels: its bytes cannot be split between them
    const auto& host = j.host(op);
    double bytes = 0, largest = 0;
    for (std::uint32_t i = 0; i < host.inputs; ++i) {
      const auto& in = t.inputs[host.inputs_offset + i];
      const int size = dtype_bytes(t.string(in.dtype));
      if (size == 0 || in.rank == 0) continue;
      const std::vector<std::int64_t> d(t.dims.begin() + in.dims_offset, t.dims.begin() + in.dims_offset + in.rank);
      if (!valid(d)) continue;
      const double b = static_cast<double>(product(d, 0, d.size())) * size;
      bytes += b;
      largest = std::max(largest, b);
    }
    if (bytes > 0 && e.first > 0) a.measurements.memory.push_back({"elementwise", bytes + largest, static_cast<double>(e.first) * 1e-9});
  }
}

// The same kernel's (or collective's) durations alone and overlapped.
struct Pair {
  std::vector<double> alone, overlapped;
};

std::map<int, std::vector<Interval>> merged_by_device(const std::map<int, std::vector<Interval>>& by_device) {
  std::map<int, std::vector<Interval>> out;
  for (const auto& [d, v] : by_device) out[d] = merged(v);
  return out;
}

// Each compute kernel against the union of collectives on its GPU.
void add_compute_overlap(const TraceJoin& j, TraceAnalysis& a) {
  const auto nccl_union = merged_by_device(j.nccl_by_device);
  std::map<std::tuple<int, std::uint32_t, std::uint64_t>, Pair> compute_pairs;  // (kind, name, launch shape)
  for (const auto& g : j.t.gpu) {
    if (!is_compute(g.klass) || g.dur_ns <= 0) continue;
    const auto it = nccl_union.find(g.device);
    const std::int64_t c = it == nccl_union.end() ? 0 : covered(it->second, g.start_ns, g.start_ns + g.dur_ns);
    auto& pair = compute_pairs[{static_cast<int>(compute_kind_of(g.klass)), g.name, g.launch_shape}];
    if (c == 0) pair.alone.push_back(static_cast<double>(g.dur_ns) * 1e-9);
    else if (2 * c >= g.dur_ns) pair.overlapped.push_back(static_cast<double>(g.dur_ns) * 1e-9);
  }
  for (const auto& [key, pair] : compute_pairs) {
    if (pair.alone.size() < 2 || pair.overlapped.size() < 2) continue;
    a.measurements.compute_overlap.push_back({static_cast<ComputeKind>(std::get<0>(key)), j.intra, std::nullopt, median(pair.alone),
                                              median(pair.overlapped), static_cast<int>(pair.alone.size()),
                                              static_cast<int>(pair.overlapped.size())});
  }
}

// Each sized collective against the union of compute kernels on its GPU.
void add_comm_overlap(const TraceJoin& j, TraceAnalysis& a) {
  const auto compute_union = merged_by_device(j.compute_by_device);
  std::map<std::tuple<std::uint32_t, int, double>, Pair> comm_pairs;  // (kernel name, kind, bytes)
  for (const auto& c : j.comms) {
    if (!c.sized) continue;
    const auto it = compute_union.find(c.device);
    const std::int64_t dur = c.end_ns - c.start_ns;
    if (dur <= 0) continue;
    const std::int64_t cov = it == compute_union.end() ? 0 : covered(it->second, c.start_ns, c.end_ns);
    auto& pair = comm_pairs[{c.name, static_cast<int>(c.sample.kind), c.sample.bytes}];
    if (cov == 0) pair.alone.push_back(static_cast<double>(c.ns) * 1e-9);
    else if (2 * cov >= dur) pair.overlapped.push_back(static_cast<double>(c.ns) * 1e-9);
  }
  for (const auto& [key, pair] : comm_pairs) {
    if (pair.alone.size() < 2 || pair.overlapped.size() < 2) continue;
    a.measurements.comm_overlap.push_back({j.intra, std::nullopt, median(pair.alone), median(pair.overlapped), static_cast<int>(pair.alone.size()),
                                           static_cast<int>(pair.overlapped.size())});
  }
}

// The sized collectives in launch order, each timed by its kernels.
std::vector<CollectiveSample> in_launch_order(std::vector<CommAccumulator>& comms) {
  std::sort(comms.begin(), comms.end(), [](const CommAccumulator& x, const CommAccumulator& y) { return x.start_ns < y.start_ns; });
  std::vector<CollectiveSample> ordered;
  for (auto& c : comms) {
    if (!c.sized) continue;
    c.sample.seconds = static_cast<double>(c.ns) * 1e-9;
    ordered.push_back(std::move(c.sample));
  }
  return ordered;
}

TraceFileSummary summary_of(const KinetoTrace& t) {
  TraceFileSummary summary;
  summary.file = t.file;
  summary.rank = t.rank;
  summary.world_size = t.world_size;
  summary.events = t.events;
  summary.json_bytes = t.json_bytes;
  summary.file_bytes = t.file_bytes;
  return summary;
}

}  // namespace

TraceAnalysis analyze_traces(const std::vector<KinetoTrace>& traces, const TraceAnalysisOptions& options) {
  TraceAnalysis a;
  std::vector<RankCollectives> per_file_collectives;
  bool noted_group_guess = false;
  for (const auto& t : traces) {
    TraceFileSummary summary = summary_of(t);
    TraceJoin j(t, options);
    join_events(j, summary, noted_group_guess, a);
    add_gemm_measurements(j, a);
    add_elementwise_measurements(j, a);
    add_compute_overlap(j, a);
    add_comm_overlap(j, a);
    per_file_collectives.push_back({t.world_size.value_or(0), in_launch_order(j.comms)});
    a.files.push_back(std::move(summary));
  }
  match_across_ranks(per_file_collectives, a);
  return a;
}

}  // namespace parasim::calibrate
