// parasim.whatif: the same question on other hardware, every variant re-planned and simulated.
#include "python/bindings.hpp"

#include <thread>

#include "cli/plan_search.hpp"
#include "cli/prediction_interval.hpp"
#include "cli/whatif_report.hpp"
#include "cli/whatif_variants.hpp"
#include "planner/whatif.hpp"
#include "python/common.hpp"

namespace parasim::python {
namespace {

struct StudyVariant : Entry {};

// A what-if study: the CLI's document and one entry per variant.
struct PyStudy {
  nlohmann::json document;
  std::vector<StudyVariant> variants;
};

std::vector<std::string> vary_axes(const py::object& vary) {
  if (!py::isinstance<py::dict>(vary)) return overrides(vary);
  std::vector<std::string> out;
  for (const auto& [key, values] : vary.cast<py::dict>()) {
    std::string text = py::str(key).cast<std::string>() + "=";
    if (py::isinstance<py::str>(values) || !py::hasattr(values, "__iter__")) {
      text += py::str(values).cast<std::string>();
    } else {
      bool first = true;
      for (const auto& v : values) {
        text += (first ? "" : ",") + py::str(v).cast<std::string>();
        first = false;
      }
    }
    out.push_back(text);
  }
  return out;
}

struct WhatifArguments {
  py::object vary, set, fix, progress;
  bool fixed_plan = false;
  std::string framework = "any", headroom = "auto";
  int simulate_top = 32, max_pp = 0, max_tp = 0, threads = 0;
};

PyStudy whatif(const std::string& scenario, const WhatifArguments& a) {
  const cli::StudyRequest request{scenario, vary_axes(a.vary), overrides(a.set), a.fixed_plan};
  cli::ConstraintOptions constraints;
  constraints.fix = overrides(a.fix);
  constraints.framework = a.framework;
  constraints.max_pp = checked("max_pp", a.max_pp, 0, 1 << 20);
  constraints.max_tp = checked("max_tp", a.max_tp, 0, 1 << 20);
  checked("simulate_top", a.simulate_top, 1, 100000);
  checked("threads", a.threads, 0, 4096);
  Progress progress(a.progress);
  PyStudy out;
  {
    py::gil_scoped_release release;
    cli::StudyResult r;
    r.study = cli::read_study(request);
    if (r.study.axes.empty()) throw InputError({"vary", 0, 0}, {}, "missing: give vary={'key.path': [values, ...]} or a study file");
    r.scenario = r.study.scenario.string();
    r.variants = planner::variant_grid(r.study.axes);
    planner::WhatifOptions options;
    options.fixed_plan = r.study.fixed_plan;
    options.simulate_top = a.simulate_top;
    options.constraints = constraints.parse();
    options.headroom = cli::parse_headroom(a.headroom);
    options.threads = a.threads > 0 ? a.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (progress.given()) options.progress = [&progress](std::size_t done, std::size_t total) { progress("variants", done, total); };
    r.outcomes = planner::evaluate_jobs(planner::study_jobs(cli::load_variants(r.study, r.variants), r.study.fixed_plan), options);
    cli::attach_intervals(r.outcomes);
    out.document = cli::study_json(r);
  }
  progress.raise_if_failed();
  for (const auto& v : out.document.at("variants")) out.variants.push_back({{v}});
  return out;
}

}  // namespace

void bind_whatif(py::module_& m) {
  py::class_<StudyVariant> variant(m, "Variant", "One variant of a what-if study, as `parasim whatif --json` lists it (to_dict() is that entry).");
  entry_fields(variant, {{"values", "{varied key: value} of this variant"},
                         {"label", ""},
                         {"gpus", ""},
                         {"gpu", ""},
                         {"plan", "the plan evaluated (re-planned unless fixed_plan)"},
                         {"iteration_s", "seconds per iteration (0 with a failure)"},
                         {"interval", "the 80% prediction interval, {'lo': s, 'hi': s}"},
                         {"tokens_per_s", ""},
                         {"mfu", ""},
                         {"speedup", "throughput against the first variant"},
                         {"fits", ""},
                         {"failure", "why this variant has no result (nothing fits, ...), else None"},
                         {"peak_memory_bytes", ""},
                         {"breakdown_s", "compute, exposed communication by dimension and bubble, means over stages"}});
  variant.def("__repr__", [](const StudyVariant& e) { return "<parasim.Variant " + e.json.at("label").get<std::string>() + " " + e.json.at("iteration_s").dump() + " s>"; });
  py::class_<PyStudy> study(m, "Study", "A what-if study: the scenario's variants, each re-planned (or its plan kept) and simulated.");
  study.def_readonly("variants", &PyStudy::variants, "one per point of the grid, the first axis changing slowest")
      .def("to_dict", [](const PyStudy& s) { return to_python(s.document); }, "The same document as `parasim whatif --json`.")
      .def("__repr__", [](const PyStudy& s) { return "<parasim.Study " + std::to_string(s.variants.size()) + " variants>"; });
  reads_as_list(study, &PyStudy::variants, "variant");
  m.def(
      "whatif",
      [](const std::string& scenario, const py::object& vary, const py::object& set, bool fixed_plan, const py::object& fix, const std::string& framework,
         const std::string& headroom, int simulate_top, int max_pp, int max_tp, int threads, const py::object& progress) {
        return whatif(scenario, {vary, set, fix, progress, fixed_plan, framework, headroom, simulate_top, max_pp, max_tp, threads});
      },
      py::arg("scenario"), py::arg("vary") = py::none(), py::arg("set") = py::none(), py::arg("fixed_plan") = false, py::arg("fix") = py::none(),
      py::arg("framework") = "any", py::arg("headroom") = "auto", py::arg("simulate_top") = 32, py::arg("max_pp") = 0, py::arg("max_tp") = 0, py::arg("threads") = 0,
      py::arg("progress") = py::none(),
      "The same question on other hardware, as `parasim whatif`: every combination of the varied keys' values (the first key\n"
      "changing slowest), each the scenario with one more override per key, re-planned and simulated. Returns a Study.\n"
      "  scenario:   a scenario YAML, or a study YAML (scenarios/whatif/) naming one and its axes\n"
      "  vary:       {'key.path': [values, ...]} (any key --set takes, e.g. 'cluster.nodes', 'cluster.node.nics.bandwidth'),\n"
      "              or ['key.path=v1,v2'] as --vary\n"
      "  set:        overrides for every variant\n"
      "  fixed_plan: simulate the scenario's plan in every variant instead of re-planning\n"
      "  fix, framework, headroom, max_pp, max_tp, simulate_top: what every re-plan obeys, as for plan()\n"
      "  threads:    simulations at once (0: the machine's cores); the result is the same for any count\n"
      "  progress:   called as progress('variants', done, total) as variants finish\n"
      "A variant where nothing fits has `failure` set and the study goes on; bad keys or values raise InputError.");
}

}  // namespace parasim::python
