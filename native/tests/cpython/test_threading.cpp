// threading's Thread objects on synthetic images laid out with the
// generated tables and the hand-written object table, for every version:
// _active and _limbo read through sys.modules, each Thread's name,
// identifiers, daemon flag and what its joiners wait on; garbage gives a
// problem or empty fields, never a crash, and no more threads than asked.
#include <catch2/catch.hpp>

#include <random>

#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/cpython/threading.hpp"
#include "support/cpython_objects.hpp"
#include "support/read_problem.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::Objects;

namespace {

// A Thread as threading.py of that version leaves it.
struct ThreadSpec {
  std::string name;
  std::uint64_t ident = 0;  // 0: None (not yet running)
  int native_id = 0;        // 0: None
  bool daemon = false;
  bool tstate_lock = true;  // 3.6–3.12: a lock, else None
};

// `managed` (3.11+): Thread instances keep their attributes in a managed
// dict, as CPython lays out instances of Python classes; else in an
// instance dict at tp_dictoffset.
struct Threading : Objects {
  bool managed;
  Addr thread_type, main_thread_type, lock_type, handle_type;

  explicit Threading(int minor, bool managed_dicts = false) : Objects(minor), managed(managed_dicts) {
    thread_type = managed ? managed_type("Thread") : type_with_dict("Thread");
    main_thread_type = managed ? managed_type("_MainThread") : type_with_dict("_MainThread");
    lock_type = img.type("_thread.lock", 0);
    handle_type = img.type("_thread._ThreadHandle", 0);
  }
  bool has_native_id() const { return l.minor >= 8; }
  bool has_tstate_lock() const { return l.minor <= 12; }

  // The attributes threading.Thread.__init__ and _bootstrap_inner set.
  std::vector<std::pair<std::string, Addr>> attributes(const ThreadSpec& s) {
    std::vector<std::pair<std::string, Addr>> a = {
        {"_target", none},
        {"_name", img.str(s.name)},
        {"_daemonic", boolean(s.daemon)},
        {"_ident", s.ident ? integer(static_cast<std::int64_t>(s.ident)) : none},
    };
    if (has_native_id()) a.emplace_back("_native_id", s.native_id ? integer(s.native_id) : none);
    if (has_tstate_lock()) a.emplace_back("_tstate_lock", s.tstate_lock ? object(lock_type) : none);
    else a.emplace_back("_handle", object(handle_type));
    return a;
  }
  // `materialised`: a managed dict made a dict object (obj.__dict__ used).
  Addr thread(const ThreadSpec& s, Addr type = 0, bool materialised = false) {
    if (!type) type = thread_type;
    return managed ? managed_instance(type, attributes(s), materialised) : instance(type, attributes(s));
  }

  // sys.modules with a threading module whose globals are `globals`.
  PythonState with_threading(const std::vector<std::pair<std::string, Addr>>& globals) {
    return state(dict({{"sys", module(dict({}))}, {"threading", module(dict(globals))}}));
  }
  // threading with _active {ident: Thread} and _limbo {Thread: Thread}.
  PythonState with_tables(Addr active, Addr limbo) {
    return with_threading({{"_active_limbo_lock", object(lock_type)}, {"_active", active}, {"_limbo", limbo}});
  }

  Addr type_of(Addr object) const { return object ? img.get<Addr>(object, l.object_ob_type) : 0; }

  ThreadingState read(const PythonState& st, std::size_t max_threads = ThreadingOptions{}.max_threads) {
    auto mem = img.reader();
    ThreadingOptions opts;
    opts.max_threads = max_threads;
    return threading_state(mem, st, opts);
  }
};

// threading with MainThread and a daemon worker in _active and a thread in
// _limbo: read back exactly, fields and all.
void check_two_started_one_starting(Threading& t, bool materialise_worker = false) {
  const std::uint64_t main_ident = 0x7f3a5c1ff740, worker_ident = 0x7f3a5b9fe6c0;
  Addr main = t.thread({"MainThread", main_ident, 4000, false}, t.main_thread_type);
  Addr worker = t.thread({"écrivain-1", worker_ident, 4001, true}, 0, materialise_worker);
  Addr starting = t.thread({"Thread-2 (serve)", 0, 0, false, false});  // before _bootstrap_inner
  Addr active = t.dict_of({{t.integer(static_cast<std::int64_t>(main_ident)), main},
                           {t.integer(static_cast<std::int64_t>(worker_ident)), worker}});
  auto st = t.with_tables(active, t.dict_of({{starting, starting}}));
  auto r = t.read(st);

  CHECK(r.imported);
  CHECK(r.problem.empty());
  REQUIRE(r.threads.size() == 3);
  const auto &m = r.threads[0], &w = r.threads[1], &s = r.threads[2];

  CHECK(m.object == main);
  CHECK(m.type == "_MainThread");
  CHECK(m.name == "MainThread");
  CHECK(m.ident == std::optional<std::uint64_t>(main_ident));
  CHECK(m.daemon == std::optional<bool>(false));
  CHECK(m.started);

  CHECK(w.object == worker);
  CHECK(w.type == "Thread");
  CHECK(w.name == "écrivain-1");
  CHECK(w.ident == std::optional<std::uint64_t>(worker_ident));
  CHECK(w.daemon == std::optional<bool>(true));
  CHECK(w.started);

  CHECK(s.object == starting);
  CHECK(s.name == "Thread-2 (serve)");
  CHECK(!s.ident);
  CHECK(!s.native_id);
  CHECK(s.daemon == std::optional<bool>(false));
  CHECK(!s.started);

  for (const auto& x : {m, w}) {
    if (t.has_native_id()) CHECK(x.native_id == std::optional<int>(x.object == main ? 4000 : 4001));
    else CHECK(!x.native_id);
    if (t.has_tstate_lock()) {
      CHECK(t.type_of(x.tstate_lock) == t.lock_type);
      CHECK(x.handle == 0);
    } else {
      CHECK(x.tstate_lock == 0);
      CHECK(t.type_of(x.handle) == t.handle_type);
    }
  }
  // None for _tstate_lock (not yet running, or ended) is no lock.
  CHECK(s.tstate_lock == 0);
}

}  // namespace

using namespace pyhang::cpython::testing;

TEST_CASE("two started threads (one daemon) and one in _limbo give exactly those threads and their fields, "
          "in every version",
          "[cpython][threading]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Threading t(minor);
    check_two_started_one_starting(t);
  }
}

TEST_CASE("Thread attributes in a managed dict (3.11: values pointer, 3.12: tagged values, 3.13: inline values; "
          "or a materialised dict) read as from an instance dict",
          "[cpython][threading]") {
  for (int minor = 11; minor <= 13; ++minor) {
    for (bool materialised : {false, true}) {
      INFO("3." << minor << (materialised ? ", worker's dict materialised" : ""));
      Threading t(minor, true);
      check_two_started_one_starting(t, materialised);
    }
  }
}

TEST_CASE("threading not imported gives imported=false and a problem line", "[cpython][threading]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Threading t(minor);
    auto st = t.state(t.dict({{"sys", t.module(t.dict({}))}, {"_thread", t.module(t.dict({}))}}));
    auto r = t.read(st);
    CHECK_FALSE(r.imported);
    CHECK(r.threads.empty());
    CHECK(says(r.problem, ReadWhy::NotImported, {{ReadPart::Module, 0}}));
    CHECK(r.problem.name == "threading");
  }
  // No Python state at all, or a version without layouts.
  Threading t(11);
  PythonState none;
  auto r = t.read(none);
  CHECK_FALSE(r.imported);
  CHECK(r.problem.why == ReadWhy::NoPythonState);
  CHECK(r.problem.name == "not-python");
  PythonState unknown;
  unknown.status = Status::Ok;
  unknown.major = 3;
  unknown.minor = 99;
  r = t.read(unknown);
  CHECK_FALSE(r.imported);
  CHECK(says(r.problem, ReadWhy::NoLayout, {{ReadPart::Object, 0}}));
}

TEST_CASE("an _active that is not a dict, or absent, is a problem and _limbo is still read", "[cpython][threading]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Threading t(minor);
    Addr starting = t.thread({"Thread-3", 0, 0, true, false});
    Addr limbo = t.dict_of({{starting, starting}});
    for (Addr active : {t.img.str("not a dict"), t.list({starting}), t.none, Image::kUnmapped}) {
      auto r = t.read(t.with_tables(active, limbo));
      CHECK(r.imported);
      REQUIRE_FALSE(r.problem.path.empty());
      CHECK(r.problem.path[0] == ReadStep{ReadPart::Attribute, active, "threading._active", 0});
      REQUIRE(r.threads.size() == 1);
      CHECK(r.threads[0].object == starting);
      CHECK(r.threads[0].name == "Thread-3");
      CHECK_FALSE(r.threads[0].started);
    }
    auto r = t.read(t.with_threading({{"_limbo", limbo}}));
    CHECK(r.imported);
    REQUIRE_FALSE(r.problem.path.empty());
    CHECK(r.problem.path[0].name == "threading._active");
    CHECK(r.problem.why == ReadWhy::NoKey);
    CHECK(r.threads.size() == 1);
  }
}

TEST_CASE("Thread attributes of the wrong type or pointing nowhere give empty fields", "[cpython][threading]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Threading t(minor);
    // every attribute of another type than threading.py gives it
    Addr wrong = t.instance(t.thread_type, {{"_name", t.integer(7)},
                                            {"_ident", t.img.str("0x7f00")},
                                            {"_native_id", t.real(4000.0)},
                                            {"_daemonic", t.img.str("yes")},
                                            {"_tstate_lock", t.none},
                                            {"_handle", t.none}});
    // out-of-range numbers: a negative ident, a native id no LWP can have
    Addr range = t.instance(t.thread_type, {{"_name", t.img.str("r")},
                                            {"_ident", t.integer(-5)},
                                            {"_native_id", t.integer(std::int64_t{1} << 40)},
                                            {"_daemonic", t.dict({})}});
    // every attribute a pointer into nowhere
    Addr nowhere = t.instance(t.thread_type, {{"_name", Image::kUnmapped},
                                              {"_ident", Image::kUnmapped + 8},
                                              {"_native_id", Image::kUnmapped + 16},
                                              {"_daemonic", Image::kUnmapped + 24},
                                              {"_tstate_lock", Image::kUnmapped + 32},
                                              {"_handle", Image::kUnmapped + 40}});
    // an instance dict pointer into nowhere, a Thread without attributes,
    // a "Thread" that is no object at all
    Addr lost = t.object(t.thread_type);
    t.img.put<Addr>(lost, Objects::kDictOffset, Image::kUnmapped);
    Addr bare = t.instance(t.thread_type, {});
    Addr active = t.dict_of({{t.integer(1), wrong},
                             {t.integer(2), range},
                             {t.integer(3), nowhere},
                             {t.integer(4), lost},
                             {t.integer(5), bare},
                             {t.integer(6), Image::kUnmapped}});
    auto r = t.read(t.with_tables(active, t.dict_of({})));
    CHECK(r.imported);
    REQUIRE(r.threads.size() == 6);
    for (const auto& x : r.threads) {
      CHECK(x.name.empty() == (x.object != range));
      CHECK(!x.ident);
      CHECK(!x.native_id);
      CHECK(!x.daemon);
      CHECK(x.tstate_lock == 0);
      CHECK(x.handle == 0);
      CHECK(x.started);
    }
    CHECK(r.threads[0].type == "Thread");
    CHECK(r.threads[5].object == Image::kUnmapped);
    CHECK(r.threads[5].type.empty());
  }
}

TEST_CASE("the number of threads read is bounded by ThreadingOptions::max_threads, _active first",
          "[cpython][threading]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Threading t(minor);
    std::vector<std::pair<Addr, Addr>> running, starting;
    for (int i = 0; i < 20; ++i) {
      auto ident = static_cast<std::int64_t>(0x7f0000100000 + 0x1000 * i);
      running.emplace_back(t.integer(ident), t.thread({"Thread-" + std::to_string(i), std::uint64_t(ident), 5000 + i}));
    }
    for (int i = 0; i < 2; ++i) {
      Addr s = t.thread({"Starting-" + std::to_string(i), 0, 0, false, false});
      starting.emplace_back(s, s);
    }
    auto st = t.with_tables(t.dict_of(running), t.dict_of(starting));
    auto r = t.read(st, 5);
    REQUIRE(r.threads.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) CHECK(r.threads[i].object == running[i].second);
    r = t.read(st, 21);
    REQUIRE(r.threads.size() == 21);
    CHECK(r.threads[20].object == starting[0].second);
    CHECK_FALSE(r.threads[20].started);
    CHECK(t.read(st, 0).threads.empty());
    CHECK(t.read(st).threads.size() == 22);
  }
}

TEST_CASE("a cyclic, huge or random _active gives a problem or empty fields, never a crash", "[cpython][threading]") {
  std::mt19937_64 rng(99);
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Threading t(minor);
    Addr worker = t.thread({"worker", 0x7f0000001000, 4100});

    // a dict that holds itself, as its value and as its key, read as both
    // _active and _limbo; a Thread whose instance dict is that dict
    Addr cyclic = t.img.alloc(64);
    Addr odd = t.object(t.thread_type);
    t.img.put<Addr>(odd, Objects::kDictOffset, cyclic);
    t.dict_of({{t.integer(1), worker}, {t.integer(2), cyclic}, {cyclic, odd}}, cyclic);
    auto st = t.with_tables(cyclic, cyclic);
    auto r = t.read(st);
    CHECK(r.imported);
    REQUIRE(r.threads.size() == 6);
    CHECK(r.threads[0].name == "worker");
    CHECK(r.threads[1].object == cyclic);
    CHECK(r.threads[1].name.empty());
    CHECK(r.threads[2].object == odd);
    CHECK(r.threads[2].name.empty());
    CHECK(!r.threads[2].ident);

    // a dict whose keys pointer points back at the dict object
    Addr loop = t.img.alloc(64);
    t.dict_of({{t.integer(1), worker}}, loop);
    t.img.put<Addr>(loop, t.l.dict_ma_keys, loop);
    st = t.with_tables(loop, t.dict_of({}));
    (void)t.read(st);
    CHECK(t.read(st, 3).threads.size() <= 3);

    // a dict that claims 2^29 entries: as many as max_threads, or as many
    // as can be read, no more
    Addr huge = t.dict_of({{t.integer(1), worker}, {t.integer(2), worker}, {t.integer(3), worker}});
    t.img.put<std::int64_t>(t.dict_nentries(huge), 0, std::int64_t{1} << 29);
    t.img.put<std::int64_t>(huge, t.l.dict_ma_used, std::int64_t{1} << 29);
    st = t.with_tables(huge, t.dict_of({}));
    CHECK(t.read(st, 2).threads.size() == 2);
    r = t.read(st);
    CHECK(r.threads.size() >= 3);
    CHECK(r.threads.size() <= ObjectLimits{}.max_entries);

    // random words where threading's globals, tables and threads should be
    Addr junk = t.img.alloc(4096);
    for (int i = 0; i < 512; ++i) t.img.put<std::uint64_t>(junk, 8 * i, rng());
    for (int i = 0; i < 64; ++i) t.img.put<Addr>(junk, 8 * (i * 7 % 512), junk + 8 * (rng() % 512));
    for (Addr a : {junk, junk + 8, junk + 64, junk + 4, Image::kUnmapped, Addr{0x10}}) {
      INFO("at " << a);
      (void)t.read(t.with_tables(a, a), 50);
      (void)t.read(t.state(t.dict({{"threading", a}})));
      (void)t.read(t.state(t.dict({{"threading", t.module(a)}})));
      auto j = t.read(t.with_tables(t.dict_of({{t.integer(1), a}, {a, a}}), a), 50);
      CHECK(j.threads.size() <= 2);
    }
    // sys.modules itself garbage
    r = t.read(t.state(junk));
    CHECK_FALSE(r.imported);
    CHECK_FALSE(r.problem.empty());
  }
}
