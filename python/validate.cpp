// parasim.validate: published runs simulated against their measured step times.
#include "python/bindings.hpp"

#include "cli/prediction_interval.hpp"
#include "cli/validate_report.hpp"
#include "python/common.hpp"
#include "sim/validation.hpp"

namespace parasim::python {
namespace {

// Published runs validated: the CLI's --json document, and its headline figures.
struct PyValidation {
  nlohmann::json document;
  double mape = 0;
  int rows = 0, simulated = 0, errors = 0;
};

PyValidation validate(const std::vector<std::string>& files, const std::string& by, int threads, const py::object& on_progress) {
  PyValidation out;
  checked("threads", threads, 1, 4096);
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

}  // namespace

void bind_validate(py::module_& m) {
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
}

}  // namespace parasim::python
