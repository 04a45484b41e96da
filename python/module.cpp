// import parasim: the simulator and its readers in-process, over the same libraries as the CLI.
// Results carry to_dict(), the CLI's --json document as Python objects; errors in what a user wrote
// are parasim.InputError with its file, line, column and key.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/model_report.hpp"
#include "cli/simulate_report.hpp"
#include "cli/validate_report.hpp"
#include "core/error.hpp"
#include "planner/search.hpp"
#include "sim/scenario.hpp"
#include "workload/hf_config.hpp"

namespace py = pybind11;
using namespace parasim;

namespace {

// A scenario as read, with the path errors name.
struct PyScenario {
  std::shared_ptr<const sim::Scenario> scenario;
  std::string file;
};

// The simulated scenario and its result; the CLI's document is built when asked for.
struct PyResult {
  std::shared_ptr<const sim::Scenario> scenario;
  sim::Result result;
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, hfu = 0;
  bool fits = true;
};

py::object to_python(const nlohmann::json& j) {
  // Through the JSON text: Python's json reads nlohmann's shortest round-trip numbers back to the
  // same doubles, so to_dict() serializes to the CLI's bytes.
  return py::module_::import("json").attr("loads")(j.dump());
}

std::vector<std::string> overrides(const py::object& set) {
  std::vector<std::string> out;
  if (set.is_none()) return out;
  if (py::isinstance<py::dict>(set)) {
    for (const auto& [key, value] : set.cast<py::dict>()) out.push_back(py::str(key).cast<std::string>() + "=" + py::str(value).cast<std::string>());
    return out;
  }
  for (const auto& item : set) out.push_back(py::str(item).cast<std::string>());
  return out;
}

PyScenario load_scenario(const std::string& path, const py::object& set) {
  const auto sets = overrides(set);
  py::gil_scoped_release release;
  return {std::make_shared<const sim::Scenario>(sim::load_scenario(path, sets)), path};
}

PyResult simulate(const PyScenario& s, const std::string& plan_file) {
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
    out.result = cli::run_simulation(*scenario, s.file).result;
    out.scenario = scenario;
    out.iteration_s = out.result.iteration.value();
    out.tokens_per_s = out.result.tokens_per_s;
    out.mfu = out.result.mfu;
    out.hfu = out.result.hfu;
    out.fits = out.result.memory.fits();
  }
  return out;
}

// A model as parasim understands it: `parasim model --json` and its headline figures.
struct PyModel {
  workload::ModelSpec model;
  cli::ModelFigures figures;
};

PyModel model_from_hf(const py::object& config, int seq) {
  std::string path, text;
  if (py::isinstance<py::dict>(config)) {
    text = py::module_::import("json").attr("dumps")(config).cast<std::string>();
  } else {
    path = py::str(config).cast<std::string>();
  }
  py::gil_scoped_release release;
  auto model = path.empty() ? workload::import_hf_config_text(text, "config") : workload::import_hf_config(path);
  auto figures = cli::model_figures(model, seq);
  return {std::move(model), figures};
}

// Published runs validated: the CLI's --json document, and its headline figures.
struct PyValidation {
  nlohmann::json document;
  double mape = 0;
  int rows = 0, simulated = 0, errors = 0;
};

PyValidation validate(const std::vector<std::string>& files, const std::string& by, int threads) {
  PyValidation out;
  py::gil_scoped_release release;
  const auto loaded = cli::load_rows(files);
  const auto fields = cli::residual_fields(by);
  sim::ValidateOptions options;
  options.threads = threads;
  options.hardware_dir = cli::bundled_hardware_dir();
  const auto report = sim::validate(loaded.runs, loaded.file_of, options);
  out.document = cli::validate_json(loaded, report, fields);
  out.mape = report.overall.mape;
  out.rows = report.overall.rows;
  out.simulated = report.overall.simulated;
  out.errors = static_cast<int>(loaded.errors.size());
  return out;
}

}  // namespace

PYBIND11_MODULE(parasim, m) {
  m.doc() = "parasim: simulate hybrid-parallel Transformer training in-process (the CLI's libraries).";
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      py::object error = py::reinterpret_borrow<py::object>(input_error.ptr())(e.what());
      error.attr("file") = e.where().file;
      error.attr("line") = e.where().line;
      error.attr("column") = e.where().column;
      error.attr("key") = e.key_path();
      error.attr("message") = e.message();
      PyErr_SetObject(input_error.ptr(), error.ptr());
    }
  });

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
      .def("to_dict", [](const PyResult& r) { return to_python(cli::simulate_json(*r.scenario, r.result)); },
           "The same document as `parasim simulate --json`: json.dumps(r.to_dict(), indent=2, ensure_ascii=False) is its text.")
      .def("__repr__", [](const PyResult& r) { return "<parasim.Result " + std::to_string(r.iteration_s) + " s>"; });

  py::class_<PyValidation>(m, "Validation", "Published training runs simulated and compared with their measured step times.")
      .def_readonly("mape", &PyValidation::mape, "mean absolute percentage error over the rows simulated, 0..1")
      .def_readonly("rows", &PyValidation::rows)
      .def_readonly("simulated", &PyValidation::simulated)
      .def_readonly("errors", &PyValidation::errors, "rows that could not be read (to_dict()['errors'] names them)")
      .def("to_dict", [](const PyValidation& v) { return to_python(v.document); }, "The same document as `parasim validate --json`.")
      .def("__repr__", [](const PyValidation& v) {
        return "<parasim.Validation " + std::to_string(v.simulated) + "/" + std::to_string(v.rows) + " rows, MAPE " + std::to_string(100 * v.mape) + "%>";
      });
  m.def("validate", &validate, py::arg("files"), py::arg("by") = "", py::arg("threads") = 1,
        "Simulates every row of the measured-run files (../shared/validation/*.yaml) with the one fill-in policy and\n"
        "compares; by: row properties to group the errors by, comma-separated (as --by); the result is the same for any\n"
        "thread count. A bad row is in to_dict()['errors'] and the others still run; a missing file raises InputError.");
  py::class_<PyModel>(m, "Model", "A model as parasim understands it: shape, parameters, FLOPs and activations per token.")
      .def_property_readonly("name", [](const PyModel& x) { return x.model.name; })
      .def_property_readonly("layers", [](const PyModel& x) { return x.model.layers; })
      .def_property_readonly("hidden", [](const PyModel& x) { return x.model.hidden; })
      .def_property_readonly("parameters", [](const PyModel& x) { return x.figures.parameters.total(); }, "total parameters")
      .def_property_readonly("training_flops_per_token", [](const PyModel& x) { return x.figures.training_flops_per_token; })
      .def("to_dict", [](const PyModel& x) { return to_python(cli::model_json(x.model, x.figures)); }, "The same document as `parasim model --json`.")
      .def("__repr__", [](const PyModel& x) { return "<parasim.Model " + x.model.name + ">"; });
  m.def("model_from_hf", &model_from_hf, py::arg("config"), py::arg("seq") = 0,
        "Imports a Hugging Face config.json (a path, or the config as a dict) as parasim models it; seq: the sequence length\n"
        "of the per-token figures (0: the model's context, else 2048). Raises InputError for a config it cannot read.");
  m.def("load_scenario", &load_scenario, py::arg("path"), py::arg("set") = py::none(),
        "Reads a scenario YAML. set: overrides as {'key.path': value} or ['key.path=value', ...], as the CLI's --set.\n"
        "Raises parasim.InputError (file, line, column, key, message) for a bad file or override.");
  m.def(
      "simulate",
      [](const py::object& scenario, const std::string& plan, const py::object& set) {
        if (py::isinstance<PyScenario>(scenario)) {
          if (!set.is_none()) throw py::value_error("set= applies to a path; pass overrides to load_scenario");
          return simulate(scenario.cast<const PyScenario&>(), plan);
        }
        return simulate(load_scenario(py::str(scenario).cast<std::string>(), set), plan);
      },
      py::arg("scenario"), py::arg("plan") = "", py::arg("set") = py::none(),
      "Simulates one iteration of a scenario (a Scenario or a path; set= overrides for a path) with its plan, or with the\n"
      "plan file given (what `parasim plan --out` writes as best_plan.yaml). Returns a Result; the GIL is released meanwhile.");
}
