// parasim.from_log: training logs read back and priced as validate prices published runs.
#include "python/bindings.hpp"

#include "cli/calibrate_from_log.hpp"
#include "cli/validate_report.hpp"
#include "python/common.hpp"

namespace parasim::python {
namespace {

// The logs as `parasim calibrate from-log --json` reports them.
struct PyLogReport {
  nlohmann::json document;
  int logs = 0;
};

PyLogReport from_log(const std::vector<std::string>& logs, const std::string& gpu, int gpus_per_node, const std::optional<double>& nic_gbps,
                     int threads) {
  checked("threads", threads, 1, 4096);
  checked("gpus_per_node", gpus_per_node, 1, 72);
  if (nic_gbps && !(*nic_gbps >= 0.001 && *nic_gbps <= 1e6)) throw InputError({"nic_gbps", 0, 0}, {}, "must be between 0.001 and 1e6 Gb/s");
  cli::FromLogOptions o;
  o.logs = logs;
  o.gpu = gpu;
  o.gpus_per_node = gpus_per_node;
  o.nic_gbps = nic_gbps;
  o.threads = threads;
  o.hardware_dir = cli::bundled_hardware_dir();
  PyLogReport out;
  {
    py::gil_scoped_release release;
    out.document = cli::from_log_json(o);
  }
  out.logs = static_cast<int>(out.document["logs"].size());
  return out;
}

}  // namespace

void bind_calibrate(py::module_& m) {
  py::class_<PyLogReport>(m, "LogReport", "Training logs read back: the run each states, its measured step time and parasim's prediction.")
      .def_readonly("logs", &PyLogReport::logs)
      .def("to_dict", [](const PyLogReport& r) { return to_python(r.document); }, "The same document as `parasim calibrate from-log --json`.")
      .def("__repr__", [](const PyLogReport& r) { return "<parasim.LogReport " + std::to_string(r.logs) + " logs>"; });
  m.def("from_log", &from_log, py::arg("logs"), py::arg("gpu"), py::arg("gpus_per_node") = 8, py::arg("nic_gbps") = py::none(),
        py::arg("threads") = 1,
        "Reads Megatron-LM, torchtitan or NeMo training logs (rank 0's stdout, from the first line) and prices each run\n"
        "as validate prices a published one, on the bundled `gpu` (h100-sxm5-80gb, ...) in nodes of gpus_per_node with\n"
        "nic_gbps per GPU (default: the GPU's standard node). A log that cannot be read raises InputError at its line.");
}

}  // namespace parasim::python
