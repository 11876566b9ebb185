// pthread_t → TID from libc's libthread_db descriptors; glibc's libraries by name.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "pyhang/glibc/libraries.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/target/target.hpp"
#include "support/skip.hpp"

using namespace pyhang;

namespace {

constexpr Addr kPthread = 0x7f0000010000;

ImageReader pthread_image(Addr tcb, Addr self, std::int32_t tid, std::uint32_t tid_offset = 720) {
  std::vector<std::uint8_t> b(2368, 0);
  std::memcpy(b.data() + 0, &tcb, 8);
  std::memcpy(b.data() + 16, &self, 8);
  std::memcpy(b.data() + tid_offset, &tid, 4);
  ImageReader r;
  r.add(kPthread, std::move(b));
  return r;
}

}  // namespace

TEST_CASE("pthread_tid_from_layout reads tid at the descriptor's offset", "[nptl]") {
  const nptl::TidDescriptor desc{32, 1, 720};
  auto ok = pthread_image(kPthread, kPthread, 4242);
  CHECK(nptl::pthread_tid_from_layout(ok, kPthread, desc) == 4242);

  SECTION("not a thread descriptor: header.self does not point back") {
    auto bad = pthread_image(kPthread, 0x1234, 4242);
    CHECK_FALSE(nptl::pthread_tid_from_layout(bad, kPthread, desc));
  }
  SECTION("exited thread (tid cleared) or vfork's negative tid") {
    auto z = pthread_image(kPthread, kPthread, 0);
    CHECK_FALSE(nptl::pthread_tid_from_layout(z, kPthread, desc));
    auto n = pthread_image(kPthread, kPthread, -77);
    CHECK_FALSE(nptl::pthread_tid_from_layout(n, kPthread, desc));
  }
  SECTION("unusable descriptors and pointers") {
    CHECK_FALSE(nptl::pthread_tid_from_layout(ok, kPthread, nptl::TidDescriptor{64, 1, 720}));
    CHECK_FALSE(nptl::pthread_tid_from_layout(ok, kPthread, nptl::TidDescriptor{32, 1, 1u << 20}));
    CHECK_FALSE(nptl::pthread_tid_from_layout(ok, kPthread + 3, desc));
    CHECK_FALSE(nptl::pthread_tid_from_layout(ok, 0, desc));
    ImageReader empty;
    CHECK_FALSE(nptl::pthread_tid_from_layout(empty, kPthread, desc));
  }
}

TEST_CASE("pthread_self of this process maps to its TID through libc's descriptors", "[nptl][live]") {
  std::shared_ptr<Target> target;
  try {
    target = Target::live(getpid());
  } catch (const std::exception& e) {
    PYHANG_SKIP("Target::live unavailable: " << e.what());
  }
  auto d = nptl::read_descriptors(target->space());
  INFO(to_string(d.problem().kind));
  REQUIRE(d);
  CHECK(d->tid.size_bits == 32);
  CHECK(d->tid.offset > 0);

  CHECK(nptl::pthread_tid(*target, static_cast<Addr>(pthread_self())) == static_cast<int>(syscall(SYS_gettid)));

  // Another thread, parked until we have looked.
  std::atomic<int> tid{0};
  std::atomic<bool> done{false};
  pthread_t t;
  struct Arg { std::atomic<int>* tid; std::atomic<bool>* done; } arg{&tid, &done};
  REQUIRE(pthread_create(
              &t, nullptr,
              [](void* p) -> void* {
                auto* a = static_cast<Arg*>(p);
                a->tid->store(static_cast<int>(syscall(SYS_gettid)));
                while (!a->done->load()) usleep(1000);
                return nullptr;
              },
              &arg) == 0);
  while (tid.load() == 0) usleep(1000);
  target->invalidate();
  nptl::PthreadMapper mapper(*target);
  CHECK_FALSE(mapper.problem());
  CHECK(mapper.tid(static_cast<Addr>(t)) == tid.load());
  CHECK_FALSE(mapper.tid(static_cast<Addr>(t) + 8));
  done = true;
  pthread_join(t, nullptr);
}

TEST_CASE("glibc's libraries are told by file name, and libpthreadpool (PyTorch's pool) is not libpthread", "[glibc]") {
  using pyhang::glibc::Library;
  using pyhang::glibc::library_of;
  CHECK(library_of("/lib/x86_64-linux-gnu/libc.so.6") == Library::Libc);
  CHECK(library_of("/lib64/libc-2.17.so") == Library::Libc);
  CHECK(library_of("/lib/x86_64-linux-gnu/libpthread.so.0") == Library::Libpthread);
  CHECK(library_of("/lib64/libpthread-2.17.so") == Library::Libpthread);
  CHECK(library_of("/usr/lib/x86_64-linux-gnu/libpthreadpool.so.0") == Library::None);
  CHECK(library_of("/lib64/ld-linux-x86-64.so.2") == Library::Loader);
  CHECK(!pyhang::glibc::is_glibc("/usr/lib/x86_64-linux-gnu/libpthreadpool.so.0"));
}
