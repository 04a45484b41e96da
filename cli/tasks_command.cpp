// parasim tasks <scenario>: the task graph of one iteration — counts by kind, FLOPs against the
// formula, bytes per collective, and memory per stage with the fit verdict.
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "sim/scenario.hpp"
#include "workload/memory.hpp"
#include "workload/task_graph.hpp"

namespace parasim::cli {
namespace {

using namespace workload;

struct FlopsCheck {
  double tasks = 0;     ///< sum over the task graph, all GPUs
  double model = 0;     ///< without recompute: training FLOPs per token x tokens
  double formula = 0;   ///< the published formula for this architecture
  std::string formula_name;
};

// GPT shapes (MHA, 4h GELU MLP) are checked against Megatron-LM's formula, everything else against
// 6N + 6·s_eff·n_h·(d_qk + d_v) a layer per token (PaLM's 6N + 12·l·s·h where heads span the width and
// every layer attends to all; N the parameters a token uses, for a mixture of experts).
FlopsCheck flops_check(const ModelSpec& m, const TrainingSpec& tr, const Plan& p, const TaskGraph& g) {
  FlopsCheck f;
  f.tasks = g.total_flops();
  const double tokens = static_cast<double>(p.global_batch) * tr.seq_len;
  f.model = training_flops_per_token(m, tr.seq_len, p.tp) * tokens;
  const bool gpt = !m.is_moe() && m.causal && !m.mlm_head && m.activation == Activation::gelu && m.kv_heads == m.heads && m.ffn_hidden == 4 * m.hidden && m.q_width() == m.hidden;
  if (gpt) {
    const bool full = p.recompute == Recompute::full && p.recompute_overrides.empty() && p.recompute_method == RecomputeMethod::uniform;
    f.formula = megatron_flops(m, p.global_batch, tr.seq_len, padded_vocab(m, p.tp), full);
    f.formula_name = full ? "Megatron 96·B·s·l·h²·(1 + s/6h + V/16lh)" : "Megatron 72·B·s·l·h²·(1 + s/6h + V/12lh)";
  } else {
    // Attention: 6·s_eff·n_h·(d_qk + d_v) a layer, s_eff the keys a query attends (the window or
    // chunk on local layers); 12·s·h where n_h·d_qk = n_h·d_v = h.
    const double qk = m.is_mla() ? m.mla.qk_head_dim() : m.head_dim, v = m.is_mla() ? m.mla.v_head_dim : m.head_dim;
    double attention = 0;
    for (int l = 0; l < m.layers; ++l) attention += 6.0 * m.attended_keys(l, tr.seq_len) * m.heads * (qk + v);
    f.formula = (6 * count_parameters(m).active_in_matmuls() + attention) * tokens;
    f.formula_name = fmt::format("{} + 6·s_eff·n_h·(d_qk + d_v) a layer, per token{}", m.is_moe() ? "6N_active" : "6N",
                                 m.mtp_layers > 0 ? " (the MTP modules not counted)" : "");
  }
  return f;
}

std::string task_key(const Task& t) {
  if (t.kind == TaskKind::compute) return std::string(phase_name(t.phase));
  return fmt::format("{} {}", comm_dim_name(t.dim), collective_name(t.collective));
}

struct CommRow {
  int count = 0;
  double bytes = 0;
};

std::string to_dot(const TaskGraph& g) {
  std::string out = "digraph tasks {\n  rankdir=LR;\n  node [fontsize=9, shape=box];\n";
  for (std::uint32_t i = 0; i < g.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    const std::string label = t.kind == TaskKind::compute
                                  ? fmt::format("{} {}\\ns{} mb{} l{}", block_kind_name(g.blocks[t.block].kind), phase_name(t.phase), t.stage, t.microbatch, t.layer)
                                  : fmt::format("{} {}\\n{}", comm_dim_name(t.dim), collective_name(t.collective), format_bytes(Bytes(t.bytes)));
    out += fmt::format("  t{} [label=\"{}\"{}];\n", i, label, t.kind == TaskKind::compute ? "" : ", shape=ellipse");
    for (auto d : g.dependencies(i)) out += fmt::format("  t{} -> t{};\n", d, i);
  }
  return out + "}\n";
}

constexpr std::size_t kMaxDotTasks = 2000;

// What one iteration's task graph holds: tasks by kind, collectives by dimension, kind and group
// size, the FLOP check and the memory per stage.
struct TaskSummary {
  std::map<std::string, int> kinds;
  std::map<std::tuple<std::string, std::string, std::size_t>, CommRow> comm;
  FlopsCheck flops;
  workload::MemoryReport memory;
};

TaskSummary summarize(const sim::Scenario& s, const TaskGraph& g) {
  const auto& m = *s.model;
  const auto& tr = *s.training;
  const auto& p = *s.plan;
  TaskSummary out;
  for (const auto& t : g.tasks) {
    ++out.kinds[task_key(t)];
    if (t.kind == TaskKind::collective) {
      auto& row = out.comm[{std::string(comm_dim_name(t.dim)), std::string(collective_name(t.collective)), g.groups[t.group].size()}];
      ++row.count;
      row.bytes += t.bytes;
    }
  }
  out.flops = flops_check(m, tr, p, g);
  out.memory = memory_per_stage(m, tr, p, s.cluster.node.gpu.hbm_capacity);
  return out;
}

nlohmann::json memory_json(const workload::MemoryReport& mem) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : mem.stages) {
    stages.push_back({{"stage", st.stage},
                      {"parameters", st.parameters},
                      {"expert_parameters", st.expert_parameters},
                      {"weights_bytes", st.weights.value()},
                      {"gradients_bytes", st.gradients.value()},
                      {"optimizer_bytes", st.optimizer.value()},
                      {"activations_bytes", st.activations.value()},
                      {"recompute_working_bytes", st.recompute_working.value()},
                      {"backward_transient_bytes", st.backward_transient.value()},
                      {"buffers_bytes", st.buffers.value()},
                      {"optimizer_step_bytes", st.optimizer_step.value()},
                      {"allowance_bytes", st.allowance.value()},
                      {"total_bytes", st.total().value()},
                      {"chunks_in_flight", st.chunks_in_flight},
                      {"fits", st.total() <= mem.capacity}});
  }
  return {{"capacity_bytes", mem.capacity.value()}, {"fits", mem.fits()},
          {"problem", mem.problem() ? nlohmann::json(*mem.problem()) : nlohmann::json(nullptr)}, {"stages", stages}};
}

nlohmann::json tasks_json(const sim::Scenario& s, const TaskGraph& g, const TaskSummary& t) {
  nlohmann::json comms = nlohmann::json::array();
  for (const auto& [key, row] : t.comm) {
    comms.push_back({{"dim", std::get<0>(key)}, {"collective", std::get<1>(key)}, {"group_size", std::get<2>(key)},
                     {"count", row.count}, {"bytes", row.bytes}});
  }
  const auto& f = t.flops;
  return {
      {"scenario", s.name},
      {"gpus", s.cluster.gpus()},
      {"micro_batches", g.micro_batches},
      {"tasks", {{"total", g.tasks.size()}, {"by_kind", t.kinds}}},
      {"flops", {{"tasks", f.tasks}, {"model", f.model}, {"formula", f.formula}, {"formula_name", f.formula_name}}},
      {"communication", comms},
      {"memory", memory_json(t.memory)},
  };
}

std::string memory_table(const workload::MemoryReport& mem) {
  Table tm({"stage", "params", "weights", "grads", "optimizer", "activations", "in flight", "buffers", "allowance", "total", "verdict"},
           {Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right,
            Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::left});
  for (const auto& st : mem.stages) {
    tm.add({fmt::format("{}", st.stage), format_number(st.parameters / 1e9) + " B", format_bytes(st.weights), format_bytes(st.gradients),
            format_bytes(st.optimizer), format_bytes(st.activations), fmt::format("{}", st.chunks_in_flight), format_bytes(st.buffers),
            format_bytes(st.allowance), format_bytes(st.total()), st.total() <= mem.capacity ? "fits" : "OOM"});
  }
  std::string out = fmt::format("Memory per GPU ({} per GPU)\n", format_bytes(mem.capacity)) + tm.render();
  out += mem.fits() ? "Verdict   fits\n" : fmt::format("Verdict   {}\n", *mem.problem());
  return out;
}

std::string tasks_report(const sim::Scenario& s, const TaskGraph& g, const TaskSummary& t) {
  const auto& m = *s.model;
  const auto& p = *s.plan;
  std::string out = fmt::format("Scenario  {}: {} on {} x {}\n", s.name, m.name, s.cluster.gpus(), s.cluster.node.gpu.name);
  out += labelled_lines("Plan      ", fmt::format("tp {}{} x pp {}{} x dp {}{}{}, {}, {} micro-batches of {} per replica (global batch {}), recompute {}, zero {}",
                                                p.tp, p.sp ? " (sp)" : "", p.pp, p.vpp > 1 ? fmt::format(" (vpp {})", p.vpp) : "", p.dp,
                                                p.cp > 1 ? fmt::format(" x cp {} ({})", p.cp, cp_kind_name(p.cp_kind)) : "",
                                                m.is_moe() ? fmt::format(", ep {} etp {}", p.ep, p.expert_tp()) : "", schedule_text(p), g.micro_batches,
                                                p.micro_batch, p.global_batch, workload::recompute_text(p), p.zero)) +
         "\n";
  Table tk({"task", "count"}, {Table::Align::left, Table::Align::right});
  for (const auto& [k, n] : t.kinds) tk.add({k, fmt::format("{}", n)});
  tk.add({"total", fmt::format("{}", g.tasks.size())});
  out += tk.render() + "\n";
  const auto& f = t.flops;
  out += labelled_lines("FLOPs     ", fmt::format("{} in the tasks (all GPUs), {} without recompute", format_number(f.tasks), format_number(f.model)));
  out += labelled_lines("          ", fmt::format("{}: {} (tasks / formula = {})", f.formula_name, format_number(f.formula),
                                                format_number(f.tasks / f.formula, 5))) +
         "\n";
  Table tc({"dim", "collective", "group", "count", "bytes per rank"},
           {Table::Align::left, Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right});
  for (const auto& [key, row] : t.comm) {
    tc.add({std::get<0>(key), std::get<1>(key), fmt::format("{}", std::get<2>(key)), fmt::format("{}", row.count),
            format_bytes(Bytes(row.bytes))});
  }
  out += "Communication per iteration (one replica's ranks; every replica does the same)\n" + tc.render() + "\n";
  return out + memory_table(t.memory);
}

}  // namespace

Action add_tasks_command(CLI::App& app) {
  struct Options {
    std::string scenario;
    std::vector<std::string> set;
    bool json = false;
    bool dot = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("tasks", "Build one iteration's task graph: task counts, FLOPs, communication and memory per stage");
  cmd->footer(
      "Examples:\n"
      "  parasim tasks scenarios/jobs/mixtral-8x7b-64-h100.yaml\n"
      "  parasim tasks scenarios/jobs/deepseek-v3-2048-h800.yaml --json");
  cmd->add_option("scenario", o->scenario, "scenario YAML with cluster, model, training and plan")->required();
  cmd->add_option("--set", o->set, "override a scenario key: --set plan.tp=4 (repeatable)");
  auto* json = cmd->add_flag("--json", o->json, "print JSON instead of tables");
  cmd->add_flag("--dot", o->dot, "print the task graph in Graphviz DOT (small graphs)")->excludes(json);
  return [o]() {
    const auto s = sim::load_scenario(o->scenario, o->set);
    s.require_workload();
    const auto g = build_tasks(*s.model, *s.training, *s.plan);
    if (o->dot) {
      if (g.tasks.size() > kMaxDotTasks) {
        throw InputError({o->scenario, 0, 0}, "plan",
                         fmt::format("{} tasks are too many to draw (--dot takes up to {}); try a smaller global_batch", g.tasks.size(), kMaxDotTasks));
      }
      std::cout << to_dot(g);
      return 0;
    }
    const auto summary = summarize(s, g);
    if (o->json) {
      std::cout << tasks_json(s, g, summary).dump(2) << "\n";
      return 0;
    }
    std::cout << tasks_report(s, g, summary);
    return 0;
  };
}

}  // namespace parasim::cli
