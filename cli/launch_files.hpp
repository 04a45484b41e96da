#pragma once
// What `parasim plan` launches: the fastest simulated plan that fits and that the target framework
// (Megatron-LM) runs, chosen before any other preference; every file of --out describes that plan,
// names it and its predicted time; plans.json also keeps the nominal fastest and the gap to it.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "planner/megatron_launch.hpp"
#include "planner/megatron_deepspeed_launch.hpp"
#include "planner/torchtitan_config.hpp"
#include "planner/search.hpp"
#include "sim/error_model.hpp"
#include "sim/scenario.hpp"

namespace parasim::cli {

struct LaunchChoice {
  const planner::RankedPlan* nominal = nullptr;   ///< the fastest simulated plan that fits
  const planner::RankedPlan* fastest_launchable = nullptr;  ///< the fastest of them Megatron-LM runs; null if none
  /// The recommended plan: among those Megatron-LM runs tied with the fastest of them, the one with
  /// the memory margin, then the simplest, then the fastest (planner/ties.hpp); null if none.
  const planner::RankedPlan* launched = nullptr;
  std::string why_recommended;  ///< why the launched plan won over the fastest launchable one, if it differs
  std::vector<int> tie_group;   ///< per ranked plan: its tie group (1 = tied with the fastest), 0 if it does not fit
  workload::Plan plan;                            ///< the launched plan as Megatron-LM's arguments state it
  std::optional<planner::MegatronLaunch> megatron;  ///< its arguments and environment; set when launched on Megatron-LM
  std::optional<std::string> torchtitan;            ///< its torchtitan.toml; set when launched on torchtitan
  std::optional<planner::MegatronLaunch> megatron_deepspeed;  ///< its pretrain_gpt.py arguments; set when launched on Megatron-DeepSpeed
  planner::Constraints::Framework target = planner::Constraints::Framework::any;  ///< what it launches on (any: Megatron-LM)
  std::string framework = "Megatron-LM";            ///< its name, in every file
  int rank = 0;                                   ///< 1-based among the simulated
  std::string why_not_nominal;                    ///< why Megatron-LM cannot run the nominal plan, if it differs
  std::string why_none;                           ///< why nothing simulated can be launched, if so
  std::vector<std::string> header;                ///< what every file says about the launched plan
};

/// `errors` gives the error of a difference between plans and the memory margin wanted.
/// "Label      text" wrapped at spaces to 120 columns, the text's continuation lines under it.
std::string wrapped_paragraph(const std::string& label, const std::string& text);

/// The launch for `framework`: torchtitan's job config under --framework torchtitan, Megatron-DeepSpeed's
/// script under --framework deepspeed, else Megatron-LM's.
LaunchChoice choose_launch(const planner::SearchReport& report, const sim::Scenario& scenario, const sim::ErrorModel& errors,
                           planner::Constraints::Framework framework = planner::Constraints::Framework::any);

/// plans.json's account of the choice: the launched plan, the nominal best and the gap.
nlohmann::json launch_json(const LaunchChoice& choice);

/// One file of an --out folder: its name and text.
struct LaunchFile {
  std::string name, text;
  bool executable = false;
};

/// What --out holds for the launched plan: best_plan.yaml, the framework's launch (launch_megatron.sh and
/// megatron_args.txt, torchtitan.toml, or launch_megatron_deepspeed.sh), ds_config.json where DeepSpeed runs
/// the plan, and plans.json (`plans`, the plan --json document, with DeepSpeed's verdict added).
std::vector<LaunchFile> launch_files(const LaunchChoice& choice, const sim::Scenario& scenario, const nlohmann::json& plans);

/// Writes one file of an --out folder (executable for a script); an error naming it when the write
/// fails (a full disk shows when the buffer is written).
void write_output_file(const std::filesystem::path& path, const std::string& text, bool executable = false);

/// Writes launch_files into `dir`, removing those of an earlier run that this plan does not have.
void write_launch_files(const std::string& dir, const LaunchChoice& choice, const sim::Scenario& scenario, const nlohmann::json& plans);

/// A plan from --from-megatron-args: a launch script or argument file by path, else the arguments
/// themselves; flags skipped under ignore_unknown are listed on stderr.
workload::Plan read_megatron_source(const std::string& source, const sim::Scenario& scenario, bool ignore_unknown);

/// The human summary: the launched plan, the nominal best when it differs, the launch line.
std::string launch_summary(const LaunchChoice& choice);

}  // namespace parasim::cli
