// parasim.load_scenario and parasim.simulate: a scenario read, one iteration simulated.
#include "python/bindings.hpp"

#include "cli/simulate_report.hpp"
#include "python/common.hpp"

namespace parasim::python {
namespace {

// The simulated scenario and its result; the CLI's document is built when asked for.
struct PyResult {
  std::shared_ptr<const sim::Scenario> scenario;
  sim::Result result;
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, hfu = 0;
  bool fits = true;
};

PyResult simulate(const PyScenario& s, const std::string& plan_file, bool full_replay) {
  PyResult out;
  {
    py::gil_scoped_release release;
    auto scenario = s.scenario;
    if (!plan_file.empty()) {
      scenario->require_workload();
      auto with_plan = std::make_shared<sim::Scenario>(*scenario);
      with_plan->plan = sim::load_plan(plan_file, *with_plan->model, with_plan->cluster.gpus(), with_plan->training->seq_len);
      scenario = with_plan;
    }
    sim::SimOptions options;
    options.full_replay = full_replay;
    out.result = cli::run_simulation(*scenario, s.file, options).result;
    out.scenario = scenario;
    out.iteration_s = out.result.iteration.value();
    out.tokens_per_s = out.result.tokens_per_s;
    out.mfu = out.result.mfu;
    out.hfu = out.result.hfu;
    out.fits = out.result.memory.fits();
  }
  return out;
}

// One field of the simulate --json document, built when asked for.
py::object document_field(const PyResult& r, const char* key) { return to_python(cli::simulate_json(*r.scenario, r.result).at(key)); }

}  // namespace

void bind_simulate(py::module_& m) {
  py::class_<PyScenario>(m, "Scenario", "A scenario file as parasim read it (cluster, model, training, plan).")
      .def_property_readonly("name", [](const PyScenario& s) { return s.scenario->name; })
      .def_property_readonly("file", [](const PyScenario& s) { return s.file; })
      .def_property_readonly("gpus", [](const PyScenario& s) { return s.scenario->cluster.gpus(); })
      .def("__repr__", [](const PyScenario& s) { return "<parasim.Scenario " + s.scenario->name + " from " + s.file + ">"; });

  py::class_<PyResult>(m, "Result", "One simulated training iteration.")
      .def_readonly("iteration_s", &PyResult::iteration_s, "seconds per iteration")
      .def_readonly("tokens_per_s", &PyResult::tokens_per_s)
      .def_readonly("mfu", &PyResult::mfu, "model FLOPs utilization, 0..1")
      .def_readonly("hfu", &PyResult::hfu, "hardware FLOPs utilization (recompute counted), 0..1")
      .def_readonly("fits", &PyResult::fits, "whether every stage fits in GPU memory")
      .def_property_readonly("interval", [](const PyResult& r) { return document_field(r, "interval"); }, "the 80% prediction interval, {'lo': s, 'hi': s}")
      .def_property_readonly("plan", [](const PyResult& r) { return document_field(r, "plan"); }, "the plan simulated, in parasim's notation")
      .def_property_readonly("stages", [](const PyResult& r) { return document_field(r, "stages"); },
                             "per pipeline stage: forward, backward, recompute, optimizer, bubble and exposed communication (s), memory_bytes, fits")
      .def_property_readonly("memory", [](const PyResult& r) { return document_field(r, "memory"); }, "the peak and its parts per stage")
      .def_property_readonly("critical_path", [](const PyResult& r) { return document_field(r, "critical_path"); },
                             "the tasks on the iteration's critical path, with their share of it")
      .def("to_dict", [](const PyResult& r) { return to_python(cli::simulate_json(*r.scenario, r.result)); },
           "The same document as `parasim simulate --json`: json.dumps(r.to_dict(), indent=2, ensure_ascii=False) is its text.")
      .def("__repr__", [](const PyResult& r) { return "<parasim.Result " + std::to_string(r.iteration_s) + " s>"; });

  m.def("load_scenario", &load_scenario, py::arg("path"), py::arg("set") = py::none(),
        "Reads a scenario: a YAML path, or a dict of the same keys (file references such as cluster: resolve against the\n"
        "current directory). set: overrides as {'key.path': value} or ['key.path=value', ...], as the CLI's --set.\n"
        "Raises parasim.InputError (file, line, column, key, message) for a bad file or override.");
  m.def(
      "simulate",
      [](const py::object& scenario, const py::object& plan, const py::object& set, bool full_replay) {
        return simulate(as_scenario(scenario, set), plan.is_none() ? std::string() : py::str(plan).cast<std::string>(), full_replay);
      },
      py::arg("scenario"), py::arg("plan") = py::none(), py::arg("set") = py::none(), py::arg("full_replay") = false,
      "Simulates one iteration of a scenario (a Scenario, a path or a dict; set= overrides for a path or dict) with its plan, or with the\n"
      "plan file given (what `parasim plan --out` writes as best_plan.yaml). A long pipeline's steady state is replayed three times and\n"
      "extrapolated (to_dict()['extrapolated_rounds'] says how many rounds were added) unless full_replay=True, as the CLI's\n"
      "--full-replay. Returns a Result; the GIL is released meanwhile.");

}

}  // namespace parasim::python
