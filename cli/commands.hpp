#pragma once
// Each subcommand registers its options on the CLI11 app and runs when chosen. Commands write their
// result to stdout; errors propagate as exceptions that main turns into one line and an exit code.
#include <CLI/CLI.hpp>
#include <functional>

namespace parasim::cli {

using Action = std::function<int()>;

/// Adds the subcommand to `app` and returns what to run when it is selected.
Action add_topo_command(CLI::App& app);
Action add_schema_command(CLI::App& app);
Action add_model_command(CLI::App& app);
Action add_tasks_command(CLI::App& app);
Action add_simulate_command(CLI::App& app);
Action add_validate_command(CLI::App& app);
Action add_calibrate_command(CLI::App& app);
Action add_plan_command(CLI::App& app);
Action add_confirm_command(CLI::App& app);
Action add_whatif_command(CLI::App& app);

}  // namespace parasim::cli
