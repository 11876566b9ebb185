#include "bindings.hpp"

namespace pyhang::bindings {

void register_locks(pybind11::module_& m) { (void)m; }

}  // namespace pyhang::bindings
