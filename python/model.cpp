// parasim.model_from_hf: a Hugging Face config as parasim models it.
#include "python/bindings.hpp"

#include "cli/model_report.hpp"
#include "python/common.hpp"
#include "workload/hf_config.hpp"

namespace parasim::python {
namespace {

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

}  // namespace

void bind_model(py::module_& m) {
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
}

}  // namespace parasim::python
