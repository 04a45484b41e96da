#include "python/common.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace parasim::python {

py::object to_python(const nlohmann::json& j) {
  // Through the JSON text: Python's json reads nlohmann's shortest round-trip numbers back to the
  // same doubles, so to_dict() serializes to the CLI's bytes.
  return py::module_::import("json").attr("loads")(j.dump());
}

int checked(const char* name, int value, int lo, int hi) {
  if (value < lo || value > hi) throw InputError({"", 0, 0}, name, fmt::format("{} is not between {} and {}", value, lo, hi));
  return value;
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

PyScenario as_scenario(const py::object& scenario, const py::object& set) {
  if (!py::isinstance<PyScenario>(scenario)) return load_scenario(scenario, set);
  if (!set.is_none()) throw py::value_error("set= applies to a path or a dict; pass overrides to load_scenario");
  return scenario.cast<PyScenario>();
}

}  // namespace parasim::python
