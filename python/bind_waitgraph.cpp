// The wait-for graph: cycles and driver-lock heuristics over plain dicts.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/analysis/waitgraph.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

namespace {

waitgraph::Edge to_edge(const py::dict& d) {
  waitgraph::Edge e;
  e.waiter = d["waiter"].cast<int>();
  e.owner = d["owner"].cast<int>();
  e.kind = d["kind"].cast<std::string>();
  if (d.contains("address") && !d["address"].is_none()) e.address = d["address"].cast<Addr>();
  auto source = d["source"].cast<std::string>();
  auto parsed = parse_owner_source(source);
  if (!parsed) throw py::value_error("edge source must be an owner source name, not '" + source + "'");
  e.source = *parsed;
  if (d.contains("evidence") && !d["evidence"].is_none()) e.evidence = d["evidence"].cast<std::string>();
  return e;
}

py::dict edge_dict(const waitgraph::Edge& e) {
  py::dict d;
  d["waiter"] = e.waiter;
  d["owner"] = e.owner;
  d["kind"] = e.kind;
  d["address"] = e.address ? py::cast(*e.address) : py::none();
  d["source"] = py::str(to_string(e.source));
  d["evidence"] = e.evidence;
  return d;
}

}  // namespace

void register_waitgraph(py::module_& m) {
  m.def(
      "find_cycles",
      [](const py::list& edges, std::size_t max_cycles) {
        std::vector<waitgraph::Edge> in;
        for (auto e : edges) in.push_back(to_edge(e.cast<py::dict>()));
        auto found = waitgraph::find_cycles(in, max_cycles);
        py::list cycles;
        for (const auto& c : found.cycles) {
          py::dict d;
          d["threads"] = c.threads;
          py::list es;
          for (const auto& e : c.edges) es.append(edge_dict(e));
          d["edges"] = es;
          d["confidence"] = py::str(to_string(c.certain ? Confidence::Certain : Confidence::Likely));
          cycles.append(d);
        }
        return py::make_tuple(cycles, found.truncated);
      },
      py::arg("edges"), py::arg("max_cycles") = 1000,
      "Every deadlock cycle of a wait-for graph given as edge dicts (waiter, owner, kind, address, source, "
      "evidence): ([{threads, edges, confidence}], truncated).");
  m.def(
      "likely_holders",
      [](const py::list& threads) {
        std::vector<waitgraph::ThreadFacts> in;
        for (auto item : threads) {
          auto d = item.cast<py::dict>();
          waitgraph::ThreadFacts t;
          t.tid = d["tid"].cast<int>();
          if (!d["name"].is_none()) t.name = d["name"].cast<std::string>();
          for (auto f : d["frames"]) {
            auto fd = f.cast<py::dict>();
            t.frames.push_back({fd["function"].is_none() ? "" : fd["function"].cast<std::string>(),
                                fd["library"].is_none() ? "" : fd["library"].cast<std::string>()});
          }
          if (!d["blocked_kind"].is_none()) t.blocked_kind = d["blocked_kind"].cast<std::string>();
          if (!d["blocked_address"].is_none()) t.blocked_address = d["blocked_address"].cast<Addr>();
          t.owners = d["owners"].cast<std::vector<int>>();
          t.waits_for_gil = d["waits_for_gil"].cast<bool>();
          in.push_back(std::move(t));
        }
        py::list out;
        for (const auto& e : waitgraph::likely_holders(in)) out.append(edge_dict(e));
        return out;
      },
      py::arg("threads"),
      "Heuristic edges (source 'heuristic', with evidence) for locks that record no owner: threads inside the "
      "same library and blocked elsewhere, above all one that called back into Python and waits for the GIL.");
  m.def("is_driver_helper_thread", &waitgraph::is_driver_helper_thread, py::arg("name"));
  m.def("is_driver_library", &waitgraph::is_driver_library, py::arg("path"));
}

}  // namespace pyhang::bindings
