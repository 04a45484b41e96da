#include "cli/gnuplot.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <vector>

extern char** environ;

namespace parasim::cli {

std::optional<std::string> run_gnuplot(const std::string& gnuplot, const std::filesystem::path& dir, const std::string& script) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // gnuplot talks on stderr (font warnings, its banner on errors); parasim's stderr stays one line.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  const std::string where = dir.empty() ? std::string(".") : dir.string();
  posix_spawn_file_actions_addchdir_np(&actions, where.c_str());
  std::vector<std::string> args{gnuplot, script};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, gnuplot.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == ENOENT) return fmt::format("{} not found (install gnuplot-nox)", gnuplot);
  if (rc != 0) return fmt::format("cannot run {}: {}", gnuplot, std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return fmt::format("lost {}: {}", gnuplot, std::strerror(errno));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  // posix_spawnp reports a failed chdir or exec as exit status 127 of the child.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return fmt::format("{} not found (install gnuplot-nox)", gnuplot);
  return WIFEXITED(status) ? fmt::format("{} exited with status {} on {}", gnuplot, WEXITSTATUS(status), (dir / script).string())
                           : fmt::format("{} was killed by signal {}", gnuplot, WTERMSIG(status));
}

std::string gnuplot_terminal(const std::string& format) { return format == "png" ? "pngcairo" : "svg"; }

}  // namespace parasim::cli
