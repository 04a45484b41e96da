// import parasim: the simulator and its readers in-process, over the same libraries as the CLI.
// Results carry to_dict(), the CLI's --json document as Python objects; errors in what a user wrote
// are parasim.InputError with its file, line, column and key.
#include <pybind11/pybind11.h>

#include "core/error.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;
using parasim::InputError;

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


  parasim::python::bind_simulate(m);
  parasim::python::bind_validate(m);
  parasim::python::bind_model(m);
  parasim::python::bind_plan(m);
  parasim::python::bind_whatif(m);
  parasim::python::bind_calibrate(m);
}
