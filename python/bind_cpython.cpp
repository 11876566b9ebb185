#include "bindings.hpp"

namespace pyhang::bindings {

void register_cpython(pybind11::module_& m) { (void)m; }

}  // namespace pyhang::bindings
