#include "pyhang/cpython/interpreter.hpp"

#include "pyhang/target/target.hpp"

namespace pyhang::cpython {

Interpreter::Interpreter(std::shared_ptr<Target> target, const Options& opts)
    : target_(std::move(target)), opts_(opts), located_(locate(*target_)), state_(inspect(*target_, located_, opts_)) {}

}  // namespace pyhang::cpython
