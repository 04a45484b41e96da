#include "cli/plan_report.hpp"

#include <fmt/format.h>

#include "cli/prediction_interval.hpp"
#include "planner/launch.hpp"

namespace parasim::cli {

nlohmann::json ranked_plan_json(const planner::RankedPlan& r, const planner::SearchReport& rep, int rank, const sim::ErrorModel& errors,
                                Precision precision, const LaunchChoice& choice) {
  const auto& s = r.simulated;
  const int tie = choice.tie_group[static_cast<std::size_t>(rank - 1)];
  return {{"rank", rank},
          {"interval", interval_json(interval_of(errors, s, precision))},
          {"tie_group", tie > 0 ? nlohmann::json(tie) : nlohmann::json(nullptr)},
          {"margin", rep.capacity.value() - s.memory.peak().value()},
          {"recommended", choice.launched == &r},
          {"plan", planner::plan_name(r.plan)},
          {"tp", r.plan.tp},
          {"sp", r.plan.sp},
          {"pp", r.plan.pp},
          {"vpp", r.plan.vpp},
          {"dp", r.plan.dp},
          {"cp", r.plan.cp},
          {"ep", r.plan.ep},
          {"zero", r.plan.zero},
          {"micro_batch", r.plan.micro_batch},
          {"recompute", workload::recompute_text(r.plan)},
          {"schedule", workload::schedule_name(r.plan.schedule)},
          {"microbatch_group", r.plan.schedule == workload::Schedule::interleaved_1f1b ? nlohmann::json(r.plan.microbatch_group_size()) : nlohmann::json(nullptr)},
          {"ep_overlap", r.plan.overlap.ep_comm},
          {"iteration_s", s.iteration.value()},
          {"analytical_iteration_s", r.estimate.iteration.value()},
          {"analytical",
           {{"compute_s", r.estimate.compute.value()},
            {"recompute_s", r.estimate.recompute.value()},
            {"exposed_tp_s", r.estimate.tp.value()},
            {"exposed_pp_s", r.estimate.pp.value()},
            {"exposed_cp_s", r.estimate.cp.value()},
            {"exposed_ep_s", r.estimate.ep.value()},
            {"exposed_dp_s", r.estimate.dp.value()},
            {"bubble_s", r.estimate.bubble.value()},
            {"optimizer_s", r.estimate.optimizer.value()}}},
          {"tokens_per_s", s.tokens_per_s},
          {"model_tflops_per_gpu", s.model_tflops_per_gpu},
          {"mfu", s.mfu},
          {"peak_memory_bytes", s.memory.peak().value()},
          {"headroom_bytes", rep.capacity.value() - s.memory.peak().value()},
          {"fits", r.fits},
          {"included", r.included},
          {"analytical_rank", r.analytical_rank},
          {"megatron_rank", r.megatron_rank}};
}

nlohmann::json plan_document(const PlanSearch& searched, const LaunchChoice& choice, const sim::ErrorModel& errors) {
  const auto& s = searched.scenario;
  const auto& report = searched.report;
  const auto& gpu = s.cluster.node.gpu;
  const int gpus = s.cluster.gpus();
  nlohmann::json plans = nlohmann::json::array();
  for (std::size_t i = 0; i < report.ranked.size(); ++i) {
    plans.push_back(ranked_plan_json(report.ranked[i], report, static_cast<int>(i) + 1, errors, s.training->precision, choice));
  }
  nlohmann::json rejected = nlohmann::json::object();
  for (const auto& [why, n] : report.rejected) rejected[why] = n;
  nlohmann::json unusable = nlohmann::json::array();
  for (const auto& [p, why] : report.unusable) unusable.push_back({{"plan", planner::plan_name(p)}, {"reason", why}});
  nlohmann::json doc = {{"scenario", s.name},
                        {"model", s.model->name},
                        {"gpus", gpus},
                        {"capacity_bytes", report.capacity.value()},
                        {"budget_bytes", report.budget.value()},
                        {"considered", report.considered},
                        {"visited", report.visited},
                        {"time_limited", report.time_limited},
                        {"fit", report.scored},
                        {"simulated", report.ranked.size()},
                        {"rejected", rejected},
                        {"ranking_pairs", report.pairs},
                        {"ranking_discordant", report.discordant},
                        {"ranking_pairs_over_2pct", report.distinct_pairs},
                        {"ranking_discordant_over_2pct", report.distinct_discordant},
                        {"plans", plans},
                        {"unusable_included", unusable},
                        {"launch", launch_json(choice)}};
  doc["launch"]["plan_yaml"] = planner::plan_yaml(choice.plan, "");
  doc["launch"]["gpu"] = gpu.name;
  doc["launch"]["compute_capability"] =
      gpu.compute_capability.first > 0 ? nlohmann::json(fmt::format("{}.{}", gpu.compute_capability.first, gpu.compute_capability.second)) : nlohmann::json(nullptr);
  doc["launch"]["nodes"] = s.cluster.nodes;
  doc["launch"]["gpus_per_node"] = s.cluster.node.gpus;
  if (choice.megatron) doc["launch"]["megatron_arguments"] = planner::megatron_argument_line(*choice.megatron);

  return doc;
}

}  // namespace parasim::cli
