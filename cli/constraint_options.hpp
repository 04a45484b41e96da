#pragma once
// The options that constrain a plan search (`parasim plan`, and every re-plan of `parasim whatif`):
// --fix key=value, --framework, --max-pp, --max-tp, read into planner::Constraints.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "planner/search.hpp"

namespace parasim::cli {

struct ConstraintOptions {
  std::vector<std::string> fix;
  std::string framework = "any";
  int max_pp = 0, max_tp = 0;

  /// Registers the options on `cmd`; `scope` names what they constrain ("the search", "every re-plan").
  void add_to(CLI::App* cmd, const std::string& scope);
  /// The constraints, or an InputError naming the option at fault.
  planner::Constraints parse() const;
};

}  // namespace parasim::cli
