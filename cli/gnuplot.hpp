#pragma once
// Charts are drawn by gnuplot (Debian's gnuplot-nox), run on a script parasim writes next to the
// chart, so the user can restyle and redraw it (`cd DIR && gnuplot whatif.gp`).
#include <filesystem>
#include <optional>
#include <string>

namespace parasim::cli {

/// Runs `gnuplot` (a name looked up on PATH, or a path) on `script` inside `dir`, its output
/// silenced. Returns nullopt when it succeeded, otherwise why not ("gnuplot not found", "gnuplot
/// exited with status 1").
std::optional<std::string> run_gnuplot(const std::string& gnuplot, const std::filesystem::path& dir, const std::string& script);

/// The gnuplot terminal for a chart format: "svg" → svg, "png" → pngcairo.
std::string gnuplot_terminal(const std::string& format);

}  // namespace parasim::cli
