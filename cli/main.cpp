// parasim: which hybrid parallel plan trains fastest on this cluster, and how fast.
// main is the only place that prints errors and chooses exit codes:
//   0 success, 2 bad input or usage (one line naming file, line and key), 1 internal error,
//   3 a check the user asked for failed (validate --max-mape, simulate --fail-on-oom). Output that
//   cannot be written (a full disk) is an error too.
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "cli/help_formatter.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"parasim - simulate and plan hybrid-parallel Transformer training"};
  app.require_subcommand(1);
  app.formatter(std::make_shared<parasim::cli::WrappingFormatter>());  // subcommands made below inherit it
  app.set_version_flag("--version", std::string("parasim 0.1.0"));
  std::map<const CLI::App*, parasim::cli::Action> actions;
  auto add = [&](parasim::cli::Action (*adder)(CLI::App&)) {
    auto action = adder(app);
    actions.emplace(app.get_subcommands({}).back(), std::move(action));
  };
  add(parasim::cli::add_topo_command);
  add(parasim::cli::add_model_command);
  add(parasim::cli::add_tasks_command);
  add(parasim::cli::add_simulate_command);
  add(parasim::cli::add_plan_command);
  add(parasim::cli::add_confirm_command);
  add(parasim::cli::add_whatif_command);
  add(parasim::cli::add_validate_command);
  add(parasim::cli::add_calibrate_command);
  add(parasim::cli::add_schema_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "parasim: error: " << e.what() << " (see parasim --help)\n";
    return 2;
  }

  try {
    for (const auto* sub : app.get_subcommands()) {
      const int code = actions.at(sub)();
      // What was printed must have reached its destination: a full disk is an error, not a success.
      std::cout.flush();
      if (!std::cout) {
        std::cerr << "parasim: error: standard output: cannot write (disk full?)\n";
        return 2;
      }
      return code;
    }
  } catch (const parasim::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "parasim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
