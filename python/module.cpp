// import parasim: the simulator and its readers in-process, over the same libraries as the CLI.
// Results carry to_dict(), the CLI's --json document as Python objects; errors in what a user wrote
// are parasim.InputError with its file, line, column and key.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/launch_files.hpp"
#include "cli/model_report.hpp"
#include "cli/plan_report.hpp"
#include "cli/plan_search.hpp"
#include "cli/prediction_interval.hpp"
#include "cli/simulate_report.hpp"
#include "cli/validate_report.hpp"
#include "cli/whatif_report.hpp"
#include "cli/whatif_variants.hpp"
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

// A Python callable fed from the C++ worker threads: the GIL taken for each call. The first exception it
// raises stops further calls and is raised once the work is done (the work itself runs to its end).
class Progress {
 public:
  explicit Progress(py::object callback) : callback_(std::move(callback)) {}
  bool given() const { return !callback_.is_none(); }
  void operator()(const std::string& phase, std::size_t done, std::size_t total) {
    py::gil_scoped_acquire gil;
    if (error_) return;
    try {
      callback_(phase, done, total);
    } catch (py::error_already_set& e) {
      error_ = std::make_unique<py::error_already_set>(std::move(e));
    }
  }
  void raise_if_failed() {
    if (error_) throw *error_;
  }

 private:
  py::object callback_;
  std::unique_ptr<py::error_already_set> error_;
};

// A scenario given as a dict is read as its JSON text (JSON is YAML), a key a line, so that errors name
// the line of the key at fault; its file references resolve against the current directory.
constexpr const char* kDictName = "<scenario dict>";

PyScenario load_scenario(const py::object& source, const py::object& set) {
  const auto sets = overrides(set);
  if (py::isinstance<py::dict>(source)) {
    const auto text = py::module_::import("json").attr("dumps")(source, py::arg("indent") = 2).cast<std::string>();
    py::gil_scoped_release release;
    return {std::make_shared<const sim::Scenario>(sim::load_scenario_text(text, kDictName, sets)), kDictName};
  }
  const auto path = py::str(source).cast<std::string>();
  py::gil_scoped_release release;
  return {std::make_shared<const sim::Scenario>(sim::load_scenario(path, sets)), path};
}

// A Scenario as given, or read from a path or a dict with the overrides (which only those take).
PyScenario as_scenario(const py::object& scenario, const py::object& set) {
  if (!py::isinstance<PyScenario>(scenario)) return load_scenario(scenario, set);
  if (!set.is_none()) throw py::value_error("set= applies to a path or a dict; pass overrides to load_scenario");
  return scenario.cast<PyScenario>();
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

// One field of the simulate --json document, built when asked for.
py::object document_field(const PyResult& r, const char* key) { return to_python(cli::simulate_json(*r.scenario, r.result).at(key)); }

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

PyValidation validate(const std::vector<std::string>& files, const std::string& by, int threads, const py::object& on_progress) {
  PyValidation out;
  Progress progress(on_progress);
  {
    py::gil_scoped_release release;
    const auto loaded = cli::load_rows(files);
    const auto fields = cli::residual_fields(by);
    sim::ValidateOptions options;
    options.threads = threads;
    options.hardware_dir = cli::bundled_hardware_dir();
    if (progress.given()) options.progress = [&progress](std::size_t done, std::size_t total) { progress("rows", done, total); };
    const auto report = sim::validate(loaded.runs, loaded.file_of, options);
    out.document = cli::validate_json(loaded, report, fields);
    out.mape = report.overall.mape;
    out.rows = report.overall.rows;
    out.simulated = report.overall.simulated;
    out.errors = static_cast<int>(loaded.errors.size());
  }
  progress.raise_if_failed();
  return out;
}

// One entry of a CLI document (a plan of `plan --json`, a variant of `whatif --json`): its fields as
// attributes and to_dict() the entry itself.
struct Entry {
  nlohmann::json json;
};
struct Candidate : Entry {};
struct StudyVariant : Entry {};

template <class T>
void entry_fields(py::class_<T>& c, std::initializer_list<std::pair<const char*, const char*>> fields) {
  for (const auto& [name, doc] : fields) {
    const std::string key = name;
    c.def_property_readonly(name, [key](const T& e) { return to_python(e.json.at(key)); }, doc);
  }
  c.def("to_dict", [](const T& e) { return to_python(e.json); }, "This entry of the CLI's --json document.");
}

std::vector<std::string> words_or_pairs(const py::object& given) { return overrides(given); }

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
  o.constraints.fix = words_or_pairs(a.fix);
  o.constraints.framework = a.framework;
  o.constraints.max_pp = a.max_pp;
  o.constraints.max_tp = a.max_tp;
  if (!a.include.is_none()) {
    for (const auto& item : a.include) o.include.push_back(py::str(item).cast<std::string>());
  }
  o.headroom = a.headroom;
  o.global_batch = a.global_batch;
  o.simulate_top = a.simulate_top;
  o.threads = a.threads;
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
  constraints.fix = words_or_pairs(a.fix);
  constraints.framework = a.framework;
  constraints.max_pp = a.max_pp;
  constraints.max_tp = a.max_tp;
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

  py::class_<PyValidation>(m, "Validation", "Published training runs simulated and compared with their measured step times.")
      .def_readonly("mape", &PyValidation::mape, "mean absolute percentage error over the rows simulated, 0..1")
      .def_readonly("rows", &PyValidation::rows)
      .def_readonly("simulated", &PyValidation::simulated)
      .def_readonly("errors", &PyValidation::errors, "rows that could not be read (to_dict()['errors'] names them)")
      .def("to_dict", [](const PyValidation& v) { return to_python(v.document); }, "The same document as `parasim validate --json`.")
      .def("__repr__", [](const PyValidation& v) {
        return "<parasim.Validation " + std::to_string(v.simulated) + "/" + std::to_string(v.rows) + " rows, MAPE " + std::to_string(100 * v.mape) + "%>";
      });
  m.def("validate", &validate, py::arg("files"), py::arg("by") = "", py::arg("threads") = 1, py::arg("progress") = py::none(),
        "Simulates every row of the measured-run files (../shared/validation/*.yaml) with the one fill-in policy and\n"
        "compares; by: row properties to group the errors by, comma-separated (as --by); the result is the same for any\n"
        "thread count. A bad row is in to_dict()['errors'] and the others still run; a missing file raises InputError.\n"
        "progress: called as progress('rows', done, total) while the rows run (an exception it raises is raised at the end).");
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
        "Reads a scenario: a YAML path, or a dict of the same keys (file references such as cluster: resolve against the\n"
        "current directory). set: overrides as {'key.path': value} or ['key.path=value', ...], as the CLI's --set.\n"
        "Raises parasim.InputError (file, line, column, key, message) for a bad file or override.");
  m.def(
      "simulate",
      [](const py::object& scenario, const py::object& plan, const py::object& set) {
        return simulate(as_scenario(scenario, set), plan.is_none() ? std::string() : py::str(plan).cast<std::string>());
      },
      py::arg("scenario"), py::arg("plan") = py::none(), py::arg("set") = py::none(),
      "Simulates one iteration of a scenario (a Scenario, a path or a dict; set= overrides for a path or dict) with its plan, or with the\n"
      "plan file given (what `parasim plan --out` writes as best_plan.yaml). Returns a Result; the GIL is released meanwhile.");

  py::class_<Candidate> candidate(m, "Candidate", "One simulated plan of a search, as `parasim plan --json` lists it (to_dict() is that entry).");
  entry_fields(candidate, {{"rank", "1-based among the simulated, fastest first"},
                           {"plan", "the plan in parasim's notation, e.g. 'tp8 sp · pp4 vpp5 interleaved-1f1b · dp32 zero1 · mb1'"},
                           {"tp", ""}, {"sp", ""}, {"pp", ""}, {"vpp", ""}, {"dp", ""}, {"cp", ""}, {"ep", ""}, {"zero", ""},
                           {"micro_batch", ""}, {"schedule", ""},
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
  py::class_<PyPlanReport>(m, "PlanReport", "A plan search: the best plans, the one recommended, and its launch files.")
      .def_readonly("candidates", &PyPlanReport::candidates, "the top simulated plans, fastest first (top= of them)")
      .def_readonly("recommended", &PyPlanReport::recommended, "the plan launched (None when the framework runs none of them)")
      .def_readonly("framework", &PyPlanReport::framework, "what the launch files are for: Megatron-LM, torchtitan or Megatron-DeepSpeed")
      .def_readonly("launch_files", &PyPlanReport::launch_files, "what `parasim plan --out DIR` writes: {file name: text}")
      .def("to_dict", [](const PyPlanReport& r) { return to_python(r.document); }, "The same document as `parasim plan --json`.")
      .def("__repr__", [](const PyPlanReport& r) {
        return "<parasim.PlanReport " + std::to_string(r.document.at("plans").size()) + " simulated, best " +
               (r.candidates.empty() ? std::string("none") : r.candidates.front().json.at("plan").get<std::string>()) + ">";
      });
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
  py::class_<PyStudy>(m, "Study", "A what-if study: the scenario's variants, each re-planned (or its plan kept) and simulated.")
      .def_readonly("variants", &PyStudy::variants, "one per point of the grid, the first axis changing slowest")
      .def("to_dict", [](const PyStudy& s) { return to_python(s.document); }, "The same document as `parasim whatif --json`.")
      .def("__repr__", [](const PyStudy& s) { return "<parasim.Study " + std::to_string(s.variants.size()) + " variants>"; });
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
