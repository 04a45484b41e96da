#pragma once
// import parasim, part by part: each registers its classes and functions on the module. The order of
// the calls in module.cpp is the order help(parasim) lists them.
#include <pybind11/pybind11.h>

namespace parasim::python {

void bind_simulate(pybind11::module_& m);  ///< Scenario, Result, load_scenario, simulate
void bind_validate(pybind11::module_& m);  ///< Validation, validate
void bind_model(pybind11::module_& m);     ///< Model, model_from_hf
void bind_plan(pybind11::module_& m);      ///< Candidate, PlanReport, plan
void bind_whatif(pybind11::module_& m);    ///< Variant, Study, whatif
void bind_calibrate(pybind11::module_& m); ///< LogReport, from_log

}  // namespace parasim::python
