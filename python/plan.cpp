// parasim.plan: the search `parasim plan` runs, its candidates and the launch files.
#include "python/bindings.hpp"

#include <map>
#include <optional>

#include "cli/launch_files.hpp"
#include "cli/plan_report.hpp"
#include "cli/plan_search.hpp"
#include "cli/prediction_interval.hpp"
#include "python/common.hpp"

namespace parasim::python {
namespace {

struct Candidate : Entry {};

// The search `parasim plan` runs, its document and the launch files --out writes.
struct PyPlanReport {
  nlohmann::json document;
  std::vector<Candidate> candidates;
  std::optional<Candidate> recommended;
  std::string framework;
  std::map<std::string, std::string> launch_files;
};

struct PlanArguments {
  py::object set, fix, include, progress;
  std::string framework = "any", headroom = "auto";
  int top = 10, global_batch = 0, simulate_top = 32, max_pp = 0, max_tp = 0, threads = 0;
};

PyPlanReport plan(const py::object& scenario, const PlanArguments& a) {
  cli::PlanSearchOptions o;
  o.constraints.fix = overrides(a.fix);
  o.constraints.framework = a.framework;
  o.constraints.max_pp = checked("max_pp", a.max_pp, 0, 1 << 20);
  o.constraints.max_tp = checked("max_tp", a.max_tp, 0, 1 << 20);
  checked("top", a.top, 1, 1000);
  if (!a.include.is_none()) {
    for (const auto& item : a.include) o.include.push_back(py::str(item).cast<std::string>());
  }
  o.headroom = a.headroom;
  o.global_batch = checked("global_batch", a.global_batch, 0, 1 << 30);
  o.simulate_top = checked("simulate_top", a.simulate_top, 1, 100000);
  o.threads = checked("threads", a.threads, 0, 4096);
  o.quiet = true;
  Progress progress(a.progress);
  if (progress.given()) o.on_progress = [&progress](const char* phase, std::size_t done, std::size_t total) { progress(phase, done, total); };
  const auto loaded = as_scenario(scenario, a.set);
  o.scenario = loaded.file;
  PyPlanReport out;
  {
    py::gil_scoped_release release;
    const auto searched = cli::run_plan_search(o, *loaded.scenario, false);
    const auto errors = cli::bundled_error_model();
    const auto choice = cli::choose_launch(searched.report, searched.scenario, errors, searched.options.constraints.framework);
    out.document = cli::plan_document(searched, choice, errors);
    out.framework = choice.framework;
    for (const auto& file : cli::launch_files(choice, searched.scenario, out.document)) out.launch_files[file.name] = file.text;
  }
  progress.raise_if_failed();
  for (const auto& p : out.document.at("plans")) {
    if (static_cast<int>(out.candidates.size()) < a.top) out.candidates.push_back({{p}});
    if (p.at("recommended").get<bool>()) out.recommended = Candidate{{p}};
  }
  return out;
}

}  // namespace

void bind_plan(py::module_& m) {
  py::class_<Candidate> candidate(m, "Candidate", "One simulated plan of a search, as `parasim plan --json` lists it (to_dict() is that entry).");
  entry_fields(candidate, {{"rank", "1-based among the simulated, fastest first"},
                           {"plan", "the plan in parasim's notation, e.g. 'tp8 sp · pp4 vpp5 interleaved-1f1b · dp32 zero1 · mb1'"},
                           {"tp", ""}, {"sp", ""}, {"pp", ""}, {"vpp", ""}, {"dp", ""}, {"cp", ""}, {"ep", ""}, {"zero", ""},
                           {"micro_batch", ""}, {"schedule", ""},
                           {"microbatch_group", "interleaved 1F1B: micro-batches a chunk runs before the next (pp unless they do not divide); else None"},
                           {"recompute", "none, full or selective, with its modules where not Megatron-Core's default: 'selective (mlp,mla_up_proj)'"},
                           {"iteration_s", "simulated seconds per iteration"},
                           {"interval", "the 80% prediction interval, {'lo': s, 'hi': s}"},
                           {"tie_group", "plans in group 1 are tied with the fastest within the error of a difference; None if it does not fit"},
                           {"margin", "bytes free at the peak on the fullest GPU"},
                           {"peak_memory_bytes", ""}, {"fits", ""},
                           {"recommended", "the plan the chosen framework launches (launch_files describe it)"},
                           {"tokens_per_s", ""}, {"mfu", "model FLOPs utilization, 0..1"}});
  candidate.def("__repr__", [](const Candidate& e) {
    return "<parasim.Candidate #" + e.json.at("rank").dump() + " " + e.json.at("plan").get<std::string>() + " " + e.json.at("iteration_s").dump() + " s>";
  });
  py::class_<PyPlanReport> report(m, "PlanReport", "A plan search: the best plans, the one recommended, and its launch files.");
  report.def_readonly("candidates", &PyPlanReport::candidates, "the top simulated plans, fastest first (top= of them)")
      .def_readonly("recommended", &PyPlanReport::recommended, "the plan launched (None when the framework runs none of them)")
      .def_readonly("framework", &PyPlanReport::framework, "what the launch files are for: Megatron-LM, torchtitan or Megatron-DeepSpeed")
      .def_readonly("launch_files", &PyPlanReport::launch_files, "what `parasim plan --out DIR` writes: {file name: text}")
      .def("to_dict", [](const PyPlanReport& r) { return to_python(r.document); }, "The same document as `parasim plan --json`.")
      .def("__repr__", [](const PyPlanReport& r) {
        return "<parasim.PlanReport " + std::to_string(r.document.at("plans").size()) + " simulated, best " +
               (r.candidates.empty() ? std::string("none") : r.candidates.front().json.at("plan").get<std::string>()) + ">";
      });
  reads_as_list(report, &PyPlanReport::candidates, "candidate");
  m.def(
      "plan",
      [](const py::object& scenario, const py::object& set, const py::object& fix, const std::string& framework, int top, int global_batch,
         const std::string& headroom, int simulate_top, int max_pp, int max_tp, const py::object& include, int threads, const py::object& progress) {
        return plan(scenario, {set, fix, include, progress, framework, headroom, top, global_batch, simulate_top, max_pp, max_tp, threads});
      },
      py::arg("scenario"), py::arg("set") = py::none(), py::arg("fix") = py::none(), py::arg("framework") = "any", py::arg("top") = 10,
      py::arg("global_batch") = 0, py::arg("headroom") = "auto", py::arg("simulate_top") = 32, py::arg("max_pp") = 0, py::arg("max_tp") = 0,
      py::arg("include") = py::none(), py::arg("threads") = 0, py::arg("progress") = py::none(),
      "Searches the hybrid parallel plans of a scenario (a Scenario, a path or a dict) as `parasim plan` does and returns a PlanReport.\n"
      "  set:          overrides for a path or dict, {'key.path': value} or ['key.path=value'] (as --set)\n"
      "  fix:          plan fields pinned, {'tp': 8, 'cp': 1} or ['tp=8'] (as --fix)\n"
      "  framework:    'any', 'megatron', 'deepspeed' or 'torchtitan': the plans searched and the launch files written\n"
      "  top:          how many candidates the report keeps (to_dict() has every simulated plan)\n"
      "  global_batch: samples per iteration (0: the scenario plan's)\n"
      "  headroom:     memory kept free on every GPU, e.g. '4 GiB'; auto: the memory model's median error on published peaks\n"
      "  simulate_top: best analytical candidates the simulator scores\n"
      "  max_pp, max_tp: upper bounds (0: none)\n"
      "  include:      plan YAML files ranked with the rest\n"
      "  threads:      simulations at once (0: the machine's cores); the result is the same for any count\n"
      "  progress:     called as progress(phase, done, total) from the search ('analytical', then 'simulated')\n"
      "Raises InputError for bad input, a pin that removes every candidate (naming it), or nothing that fits (with the\n"
      "smallest footprint and a GPU count that fits). The GIL is released during the search.");

}

}  // namespace parasim::python
