#pragma once
// What every part of `import parasim` shares: a scenario as read, the CLI's JSON documents as Python
// objects, --set overrides from a dict or a list, progress callbacks fed from worker threads, and
// entries of a document (a plan, a variant) whose fields read as attributes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/scenario.hpp"

namespace parasim::python {

namespace py = pybind11;

// A scenario as read, with the path errors name.
struct PyScenario {
  std::shared_ptr<const sim::Scenario> scenario;
  std::string file;
};

/// The JSON document as Python objects: through the JSON text, so that json.dumps gives the CLI's bytes.
py::object to_python(const nlohmann::json& j);

/// --set style "key=value" strings from a dict {key: value} or a list of strings (None: none).
std::vector<std::string> overrides(const py::object& set);

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

/// `value` of the argument `name` when it lies in [lo, hi], else an InputError naming the argument (as the CLI's
/// option checks do: no silently clamped or ignored number).
int checked(const char* name, int value, int lo, int hi);

/// A scenario: a YAML path, or a dict of the same keys (its file references resolve against the current
/// directory), with --set overrides.
PyScenario load_scenario(const py::object& source, const py::object& set);
/// A Scenario as given, or read from a path or a dict with the overrides (which only those take).
PyScenario as_scenario(const py::object& scenario, const py::object& set);

// One entry of a CLI document (a plan of `plan --json`, a variant of `whatif --json`): its fields as
// attributes and to_dict() the entry itself.
struct Entry {
  nlohmann::json json;
};

template <class T>
void entry_fields(py::class_<T>& c, std::initializer_list<std::pair<const char*, const char*>> fields) {
  for (const auto& [name, doc] : fields) {
    const std::string key = name;
    c.def_property_readonly(name, [key](const T& e) { return to_python(e.json.at(key)); }, doc);
  }
  c.def("to_dict", [](const T& e) { return to_python(e.json); }, "This entry of the CLI's --json document.");
}

/// Makes a result read as the list `items` holds: len(), [i] (negative from the end) and iteration.
template <class Owner, class Item>
void reads_as_list(py::class_<Owner>& c, std::vector<Item> Owner::*items, const char* what) {
  const std::string out_of_range = std::string(what) + " index out of range";
  c.def("__len__", [items](const Owner& o) { return (o.*items).size(); });
  c.def("__getitem__", [items, out_of_range](const Owner& o, py::ssize_t i) {
    const auto n = static_cast<py::ssize_t>((o.*items).size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error(out_of_range);
    return (o.*items)[static_cast<std::size_t>(i)];
  });
  c.def("__iter__", [items](const Owner& o) { return py::make_iterator((o.*items).begin(), (o.*items).end()); }, py::keep_alive<0, 1>());
}

}  // namespace parasim::python
