#include "cli/whatif_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "cli/table.hpp"
#include "core/units.hpp"

namespace parasim::cli {
namespace {

using planner::Outcome;

std::string dim_name(std::size_t d) { return std::string(workload::comm_dim_name(static_cast<workload::CommDim>(d))); }

std::string mode_name(bool fixed_plan) { return fixed_plan ? "fixed plan" : "re-planned"; }

// A dimension whose exposed time is zero in every outcome is left out of tables and charts.
std::vector<std::size_t> exposed_dims(const std::vector<const Outcome*>& outcomes) {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < workload::kCommDims; ++d) {
    if (std::any_of(outcomes.begin(), outcomes.end(), [&](const Outcome* o) { return o->exposed_s[d] > 0; })) dims.push_back(d);
  }
  return dims;
}

std::vector<const Outcome*> pointers(const std::vector<Outcome>& outcomes) {
  std::vector<const Outcome*> out;
  for (const auto& o : outcomes) out.push_back(&o);
  return out;
}

// Speed-up in tokens/s over the first variant (the same as in iteration time while the global batch
// is the same); 0 where either has no result.
double speedup(const StudyResult& r, std::size_t i) {
  const auto& first = r.outcomes.front();
  const auto& o = r.outcomes[i];
  if (first.failure || o.failure || first.tokens_per_s <= 0) return 0;
  return o.tokens_per_s / first.tokens_per_s;
}

bool plan_changed(const StudyResult& r, std::size_t i) {
  return i > 0 && !r.outcomes[i].failure && !r.outcomes[i - 1].failure && r.outcomes[i].plan != r.outcomes[i - 1].plan;
}

std::string variant_label(const StudyResult& r, std::size_t i) {
  std::string out;
  for (const auto& v : r.variants[i].values) out += (out.empty() ? "" : " / ") + planner::value_label(v);
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double x) { return fmt::format("{}", x); }

// A string for a gnuplot script or datablock: double quotes, backslash-free.
std::string gp_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') continue;
    out += c;
  }
  return out + "\"";
}

std::string percent_change(const Outcome& base, const Outcome& moved) {
  if (moved.failure) return "no fit";
  if (base.failure || base.iteration_s <= 0) return "-";
  const double pct = 100 * (moved.iteration_s / base.iteration_s - 1);
  // A change that rounds to nothing shows as 0.0%, not as "-0.0%".
  return fmt::format("{}%{}", std::fabs(pct) < 0.05 ? "0.0" : fmt::format("{:+.1f}", pct), moved.fits ? "" : " OOM");
}

double change(const Outcome& base, const Outcome& moved) {
  if (moved.failure || base.failure || base.iteration_s <= 0) return 0;
  return 100 * (moved.iteration_s / base.iteration_s - 1);
}

// Paul Tol's colour-blind safe palette: compute, then tp, dp, pp, cp, ep, then the bubble.
const char* kColors[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb"};

}  // namespace

nlohmann::json outcome_json(const Outcome& o) {
  nlohmann::json exposed = nlohmann::json::object();
  for (std::size_t d = 0; d < workload::kCommDims; ++d) exposed[dim_name(d)] = o.exposed_s[d];
  nlohmann::json j = {{"gpu", o.gpu},
                      {"gpus", o.gpus},
                      {"plan", o.plan},
                      {"tp", o.tp},
                      {"pp", o.pp},
                      {"vpp", o.vpp},
                      {"dp", o.dp},
                      {"cp", o.cp},
                      {"ep", o.ep},
                      {"zero", o.zero},
                      {"micro_batch", o.micro_batch},
                      {"scenario_plan", o.scenario_plan},
                      {"fits", o.fits},
                      {"iteration_s", o.iteration_s},
                      {"tokens_per_s", o.tokens_per_s},
                      {"mfu", o.mfu},
                      {"model_tflops_per_gpu", o.model_tflops_per_gpu},
                      {"breakdown_s", {{"compute", o.compute_s}, {"exposed", exposed}, {"bubble", o.bubble_s}}},
                      {"peak_memory_bytes", o.peak_memory_bytes},
                      {"capacity_bytes", o.capacity_bytes},
                      {"error_features", {{"comm_share", o.comm_share}, {"bubble_share", o.bubble_share}, {"fp8", o.fp8}}},
                      {"interval", {{"lo", o.interval_lo_s}, {"hi", o.interval_hi_s}}}};
  j["failure"] = o.failure ? nlohmann::json(*o.failure) : nlohmann::json(nullptr);
  j["internal_error"] = o.internal_error;
  return j;
}

Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  o.gpu = j.at("gpu").get<std::string>();
  o.gpus = j.at("gpus").get<int>();
  o.plan = j.at("plan").get<std::string>();
  o.tp = j.at("tp").get<int>(), o.pp = j.at("pp").get<int>(), o.vpp = j.at("vpp").get<int>(), o.dp = j.at("dp").get<int>();
  o.cp = j.at("cp").get<int>(), o.ep = j.at("ep").get<int>(), o.zero = j.at("zero").get<int>(), o.micro_batch = j.at("micro_batch").get<int>();
  o.scenario_plan = j.at("scenario_plan").get<bool>();
  o.fits = j.at("fits").get<bool>();
  o.iteration_s = j.at("iteration_s").get<double>();
  o.tokens_per_s = j.at("tokens_per_s").get<double>();
  o.mfu = j.at("mfu").get<double>();
  o.model_tflops_per_gpu = j.at("model_tflops_per_gpu").get<double>();
  const auto& b = j.at("breakdown_s");
  o.compute_s = b.at("compute").get<double>();
  for (std::size_t d = 0; d < workload::kCommDims; ++d) o.exposed_s[d] = b.at("exposed").at(dim_name(d)).get<double>();
  o.bubble_s = b.at("bubble").get<double>();
  o.peak_memory_bytes = j.at("peak_memory_bytes").get<double>();
  const auto& f = j.at("error_features");
  o.comm_share = f.at("comm_share").get<double>();
  o.bubble_share = f.at("bubble_share").get<double>();
  o.fp8 = f.at("fp8").get<bool>();
  o.interval_lo_s = j.at("interval").at("lo").get<double>();
  o.interval_hi_s = j.at("interval").at("hi").get<double>();
  o.capacity_bytes = j.at("capacity_bytes").get<double>();
  if (!j.at("failure").is_null()) o.failure = j.at("failure").get<std::string>();
  o.internal_error = j.at("internal_error").get<bool>();
  return o;
}

// A variant's figures a row, then under it its plan and where its time went (means over the stages),
// so that the table stays within 120 columns whatever the plan and the dimensions exposed.
std::string study_table(const StudyResult& r) {
  const auto all = pointers(r.outcomes);
  const auto dims = exposed_dims(all);
  const bool gpus_vary = std::any_of(all.begin(), all.end(), [&](const Outcome* o) { return o->gpus != all.front()->gpus || o->gpu != all.front()->gpu; });
  std::vector<std::string> header;
  for (const auto& a : r.study.axes) header.push_back(a.key);
  if (gpus_vary) header.push_back("GPUs");
  for (const char* h : {"iteration", "tokens/s", "MFU", "speed-up", "memory", ""}) header.push_back(h);
  std::vector<Table::Align> align(header.size(), Table::Align::right);
  for (std::size_t i = 0; i < r.study.axes.size() + (gpus_vary ? 1 : 0); ++i) align[i] = Table::Align::left;
  align.back() = Table::Align::left;
  Table t(header, align);
  for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
    const auto& o = r.outcomes[i];
    std::vector<std::string> row;
    for (const auto& v : r.variants[i].values) row.push_back(planner::value_label(v));
    if (gpus_vary) row.push_back(fmt::format("{} x {}", o.gpus, o.gpu));
    if (o.failure) {
      row.resize(header.size(), "-");
      row.back() = "";
      t.add(row);
      t.add_note(*o.failure);
      continue;
    }
    row.push_back(format_duration(Seconds(o.iteration_s)));
    row.push_back(format_number(o.tokens_per_s, 6));
    row.push_back(fmt::format("{:.1f}%", 100 * o.mfu));
    const double s = speedup(r, i);
    row.push_back(s > 0 ? fmt::format("{:.2f}x", s) : "-");
    row.push_back(format_bytes(Bytes(o.peak_memory_bytes)) + (o.fits ? "" : " OOM"));
    row.push_back(plan_changed(r, i) ? "*" : "");
    t.add(row);
    t.add_note(fmt::format("{} {}{}", r.study.fixed_plan ? "plan" : "best plan", o.plan, !r.study.fixed_plan && o.scenario_plan ? " (given)" : ""));
    std::string where = fmt::format("80% interval {} - {} · compute {}", format_duration(Seconds(o.interval_lo_s)),
                                    format_duration(Seconds(o.interval_hi_s)), format_duration(Seconds(o.compute_s)));
    for (const auto d : dims) where += fmt::format(" · exposed {} {}", dim_name(d), format_duration(Seconds(o.exposed_s[d])));
    t.add_note(where + " · bubble " + format_duration(Seconds(o.bubble_s)));
  }
  std::string out = fmt::format("Study       {}{}\n", r.study.name, r.study.description.empty() ? "" : ": " + r.study.description);
  out += fmt::format("Scenario    {} ({}, {} variant{})\n\n", r.scenario, mode_name(r.study.fixed_plan), r.outcomes.size(), r.outcomes.size() == 1 ? "" : "s");
  out += t.render();
  out += fmt::format("\nTimes per iteration; compute, exposed communication and bubble are means over pipeline stages and add up to the\n"
                     "iteration.{}\n",
                     r.study.fixed_plan ? "" : " * the best plan changed from the row above; (given) the scenario's own plan is the best.");
  std::size_t best = r.outcomes.size();
  for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
    if (!r.outcomes[i].failure && (best == r.outcomes.size() || r.outcomes[i].tokens_per_s > r.outcomes[best].tokens_per_s)) best = i;
  }
  if (best < r.outcomes.size() && speedup(r, best) > 0) {
    out += fmt::format("Fastest     {}: {} tokens/s, {:.2f}x the first variant\n", variant_label(r, best), format_number(r.outcomes[best].tokens_per_s, 6),
                       speedup(r, best));
  }
  return out;
}

nlohmann::json study_json(const StudyResult& r) {
  nlohmann::json axes = nlohmann::json::array();
  for (const auto& a : r.study.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
  nlohmann::json variants = nlohmann::json::array();
  for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t k = 0; k < r.study.axes.size(); ++k) values[r.study.axes[k].key] = r.variants[i].values[k];
    auto j = outcome_json(r.outcomes[i]);
    j["values"] = values;
    j["label"] = variant_label(r, i);
    j["speedup"] = speedup(r, i);
    j["plan_changed"] = plan_changed(r, i);
    variants.push_back(std::move(j));
  }
  return {{"study", r.study.name}, {"description", r.study.description}, {"scenario", r.scenario}, {"mode", mode_name(r.study.fixed_plan)},
          {"set", r.study.set},    {"axes", axes},                         {"variants", variants}};
}

std::string study_csv(const StudyResult& r) {
  std::string out;
  for (const auto& a : r.study.axes) out += csv_field(a.key) + ",";
  out += "gpu,gpus,plan,plan_changed,scenario_plan,fits,iteration_s,interval_lo_s,interval_hi_s,tokens_per_s,mfu,model_tflops_per_gpu,speedup,compute_s";
  for (std::size_t d = 0; d < workload::kCommDims; ++d) out += ",exposed_" + dim_name(d) + "_s";
  out += ",bubble_s,peak_memory_bytes,capacity_bytes,failure\n";
  for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
    const auto& o = r.outcomes[i];
    for (const auto& v : r.variants[i].values) out += csv_field(v) + ",";
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_field(o.gpu), o.gpus, csv_field(o.plan), plan_changed(r, i), o.scenario_plan, o.fits,
                       num(o.iteration_s), num(o.interval_lo_s), num(o.interval_hi_s), num(o.tokens_per_s), num(o.mfu), num(o.model_tflops_per_gpu), num(speedup(r, i)), num(o.compute_s));
    for (const double e : o.exposed_s) out += fmt::format(",{}", num(e));
    out += fmt::format(",{},{},{},{}\n", num(o.bubble_s), num(o.peak_memory_bytes), num(o.capacity_bytes), csv_field(o.failure.value_or("")));
  }
  return out;
}

std::string study_chart(const StudyResult& r, const std::string& terminal, const std::string& output) {
  const auto all = pointers(r.outcomes);
  const auto dims = exposed_dims(all);
  std::string keys;
  for (const auto& a : r.study.axes) keys += (keys.empty() ? "" : " / ") + a.key;
  const std::size_t n = r.outcomes.size();
  // Wide enough for the labels; the x labels turn when there are many or they are long.
  std::size_t longest = 0;
  for (std::size_t i = 0; i < n; ++i) longest = std::max(longest, variant_label(r, i).size());
  const int width = static_cast<int>(std::clamp<std::size_t>(160 + n * std::max<std::size_t>(90, longest * 8), 640, 1600));
  std::string gp = fmt::format("# parasim whatif: {} ({}). Draw again with: gnuplot whatif.gp\n", r.study.name, mode_name(r.study.fixed_plan));
  gp += fmt::format("set terminal {} size {},760 noenhanced font \"sans,11\" background rgb \"white\"\n", terminal, width);
  gp += fmt::format("set output {}\n", gp_string(output));
  // The data: label, tokens/s, speed-up, then the breakdown columns (compute, exposed ..., bubble).
  gp += "$data << EOD\n\"variant\" \"tokens/s\" \"speed-up\" \"compute\"";
  for (const auto d : dims) gp += fmt::format(" \"exposed {}\"", dim_name(d));
  gp += " \"bubble\"\n";
  for (std::size_t i = 0; i < n; ++i) {
    const auto& o = r.outcomes[i];
    gp += fmt::format("{} {} {}", gp_string(variant_label(r, i) + (o.failure ? " (no fit)" : "")), num(o.tokens_per_s), num(speedup(r, i)));
    gp += fmt::format(" {}", num(o.compute_s));
    for (const auto d : dims) gp += fmt::format(" {}", num(o.exposed_s[d]));
    gp += fmt::format(" {}\n", num(o.bubble_s));
  }
  gp += "EOD\n";
  gp += fmt::format("set multiplot layout 2,1 title {}\n", gp_string(fmt::format("{}: {} ({})", r.study.name, keys, mode_name(r.study.fixed_plan))));
  // The datablock's first line names the columns: every plot reads it as a header, not as data.
  gp += "set key autotitle columnheader\nset style fill solid 0.85 border -1\nset boxwidth 0.6\nset grid ytics\nset key outside right top\n";
  // About 8 px a character at 11 pt; the key and the y label take about 260 px of the width.
  const double slot = (width - 260.0) / static_cast<double>(std::max<std::size_t>(1, n));
  if (static_cast<double>(longest) * 8.0 > slot * 0.9) gp += "set xtics rotate by -25\n";
  // Throughput as boxes at x = 0, 1, ... with the speed-up over the first variant on top.
  gp += fmt::format("set xrange [-0.6:{}]\nset yrange [0:*]\nset offsets 0,0,graph 0.12,0\n", num(static_cast<double>(n) - 0.4));
  gp += "set ylabel \"tokens/s\"\nset format y \"%.1s%c\"\n";
  gp += fmt::format("plot $data using 0:2:xtic(1) with boxes title \"throughput\" lc rgb \"{}\", \\\n", kColors[0]);
  gp += "     '' using 0:2:(sprintf(\"%.2fx\", $3)) with labels offset 0,0.8 notitle\n";
  gp += "set style data histograms\nset style histogram rowstacked\nset autoscale x\nset offsets 0,0,0,0\n";
  gp += "set ylabel \"seconds per iteration\"\nset format y \"%g\"\n";
  // Fixed colours per part (compute blue, each dimension its own, bubble grey), so a part keeps its
  // colour from one study to the next whichever dimensions are shown.
  const std::size_t columns = 2 + dims.size();
  gp += fmt::format("set linetype 1 lc rgb \"{}\"\n", kColors[0]);
  for (std::size_t i = 0; i < dims.size(); ++i) gp += fmt::format("set linetype {} lc rgb \"{}\"\n", i + 2, kColors[1 + dims[i]]);
  gp += fmt::format("set linetype {} lc rgb \"{}\"\n", columns, kColors[6]);
  gp += fmt::format("plot for [c=4:{}] $data using c:xtic(1) title columnheader(c) lt c-3\n", 3 + columns);
  gp += "unset multiplot\n";
  return gp;
}

std::string sensitivity_table(const SensitivityResult& r) {
  const auto& rep = r.report;
  const int pct = static_cast<int>(std::lround(100 * rep.fraction));
  std::vector<std::string> header{"#", "hardware parameter", fmt::format("fixed plan -{}%", pct), fmt::format("+{}%", pct)};
  if (!rep.fixed_plan) {
    header.push_back(fmt::format("re-planned -{}%", pct));
    header.push_back(fmt::format("+{}%", pct));
  }
  // What each parameter scales goes under its row: the table stays within 120 columns.
  std::vector<Table::Align> align(header.size(), Table::Align::right);
  align[1] = Table::Align::left;
  Table t(header, align);
  auto replanned = [&](const Outcome& moved) {
    return percent_change(rep.replan_base, moved) + (!moved.failure && !rep.replan_base.failure && moved.plan != rep.replan_base.plan ? " *" : "");
  };
  for (std::size_t i = 0; i < rep.knobs.size(); ++i) {
    const auto& k = rep.knobs[i];
    std::vector<std::string> row{fmt::format("{}", i + 1), std::string(k.knob->name), percent_change(rep.fixed_base, k.fixed_minus),
                                 percent_change(rep.fixed_base, k.fixed_plus)};
    if (!rep.fixed_plan) {
      row.push_back(replanned(k.replan_minus));
      row.push_back(replanned(k.replan_plus));
    }
    t.add(row);
    t.add_note(std::string(k.knob->description));
  }
  std::string out = fmt::format("Sensitivity {}: each hardware parameter {}{}% and +{}%,\n            ranked by the largest change of iteration time ({})\n",
                                r.scenario, "-", pct, pct, rep.fixed_plan ? "fixed plan" : "re-planned");
  const auto& fb = rep.fixed_base;
  out += fmt::format("Fixed plan  {}: {}, {} tokens/s{}\n", fb.plan, format_duration(Seconds(fb.iteration_s)), format_number(fb.tokens_per_s, 6),
                     fb.fits ? "" : " (does not fit)");
  if (!rep.fixed_plan) {
    const auto& rb = rep.replan_base;
    out += rb.failure ? fmt::format("Re-planned  {}\n", *rb.failure)
                      : fmt::format("Re-planned  {}: {}, {} tokens/s\n", rb.plan, format_duration(Seconds(rb.iteration_s)), format_number(rb.tokens_per_s, 6));
  }
  out += fmt::format("\n{}", t.render());
  out += "\nChange of iteration time (+ is slower). OOM: the fixed plan no longer fits; no fit: no plan fits";
  out += rep.fixed_plan ? ".\n" : ";\n* the re-planned best plan differs from the base's.\n";
  return out;
}

nlohmann::json sensitivity_json(const SensitivityResult& r) {
  const auto& rep = r.report;
  nlohmann::json params = nlohmann::json::array();
  for (const auto& k : rep.knobs) {
    nlohmann::json p = {{"name", k.knob->name},
                        {"description", k.knob->description},
                        {"swing", std::isinf(k.swing) ? nlohmann::json("inf") : nlohmann::json(k.swing)},
                        {"fixed_plan", {{"minus", outcome_json(k.fixed_minus)}, {"plus", outcome_json(k.fixed_plus)}}}};
    if (!rep.fixed_plan) p["replanned"] = {{"minus", outcome_json(k.replan_minus)}, {"plus", outcome_json(k.replan_plus)}};
    params.push_back(std::move(p));
  }
  nlohmann::json base = {{"fixed_plan", outcome_json(rep.fixed_base)}};
  if (!rep.fixed_plan) base["replanned"] = outcome_json(rep.replan_base);
  return {{"scenario", r.scenario}, {"fraction", rep.fraction}, {"mode", mode_name(rep.fixed_plan)}, {"base", base}, {"parameters", params}};
}

std::string sensitivity_csv(const SensitivityResult& r) {
  const auto& rep = r.report;
  std::string out = "rank,parameter,swing,fixed_minus_iteration_s,fixed_plus_iteration_s,fixed_minus_fits,fixed_plus_fits";
  if (!rep.fixed_plan) out += ",replanned_minus_iteration_s,replanned_plus_iteration_s,replanned_minus_plan,replanned_plus_plan";
  out += ",description\n";
  for (std::size_t i = 0; i < rep.knobs.size(); ++i) {
    const auto& k = rep.knobs[i];
    out += fmt::format("{},{},{},{},{},{},{}", i + 1, k.knob->name, std::isinf(k.swing) ? "inf" : num(k.swing), num(k.fixed_minus.iteration_s),
                       num(k.fixed_plus.iteration_s), k.fixed_minus.fits, k.fixed_plus.fits);
    if (!rep.fixed_plan) {
      out += fmt::format(",{},{},{},{}", num(k.replan_minus.iteration_s), num(k.replan_plus.iteration_s),
                         csv_field(k.replan_minus.failure.value_or(k.replan_minus.plan)), csv_field(k.replan_plus.failure.value_or(k.replan_plus.plan)));
    }
    out += fmt::format(",{}\n", csv_field(std::string(k.knob->description)));
  }
  return out;
}

std::string sensitivity_chart(const SensitivityResult& r, const std::string& terminal, const std::string& output) {
  const auto& rep = r.report;
  const int pct = static_cast<int>(std::lround(100 * rep.fraction));
  const bool fixed = rep.fixed_plan;
  const auto& base = fixed ? rep.fixed_base : rep.replan_base;
  std::string gp = fmt::format("# parasim whatif --sensitivity: {} ({}). Draw again with: gnuplot sensitivity.gp\n", r.scenario, mode_name(fixed));
  gp += fmt::format("set terminal {} size {},620 noenhanced font \"sans,11\" background rgb \"white\"\n", terminal,
                    std::max<std::size_t>(720, 160 + 80 * rep.knobs.size()));
  gp += fmt::format("set output {}\n", gp_string(output));
  gp += fmt::format("$data << EOD\n\"parameter\" \"-{}%\" \"+{}%\"\n", pct, pct);
  for (const auto& k : rep.knobs) {
    gp += fmt::format("{} {} {}\n", gp_string(std::string(k.knob->name)), num(change(base, fixed ? k.fixed_minus : k.replan_minus)),
                      num(change(base, fixed ? k.fixed_plus : k.replan_plus)));
  }
  gp += "EOD\n";
  gp += fmt::format("set title {}\n", gp_string(fmt::format("{}: iteration time change per hardware parameter at -{}% and +{}% ({})", r.scenario, pct, pct,
                                                            mode_name(fixed))));
  gp += "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\nset grid ytics\n";
  gp += "set rmargin 12\nset xtics rotate by -30\nset ylabel \"change of iteration time (%)\"\nset xzeroaxis lt -1\nset key top right\n";
  gp += fmt::format("plot $data using 2:xtic(1) title columnheader(2) lc rgb \"{}\", '' using 3 title columnheader(3) lc rgb \"{}\"\n", kColors[1],
                    kColors[0]);
  return gp;
}

}  // namespace parasim::cli
