// SPDX-License-Identifier: Apache-2.0
// The one file writer: a regular file or a new name is replaced whole, through a temporary file no
// one can name in advance; links, devices, FIFOs and directories are refused and left as they
// were; a full device gives the system's words. Each test works in its own fresh directory.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "host/file_writer.h"

using namespace jitterd;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the temporary one, removed with everything in it at the end.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() / ("jitterd_file_writer_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string contents_of(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("file writer: a new file, then a regular file replaced whole, nothing left beside it") {
  for (const TemporaryFile temporary : {TemporaryFile::unnamed_if_possible, TemporaryFile::named}) {
    Scratch scratch(temporary == TemporaryFile::named ? "new_named" : "new_unnamed");
    const fs::path path = scratch.dir / "b.json";
    CHECK_FALSE(replace_problem(path));
    CHECK_FALSE(replace_file(path, "first\n", temporary));
    CHECK(contents_of(path) == "first\n");
    const auto inode = fs::status(path).type();
    CHECK(inode == fs::file_type::regular);
    CHECK_FALSE(replace_file(path, "second\n", temporary));
    CHECK(contents_of(path) == "second\n");
    CHECK(scratch.names() == std::vector<std::string>{"b.json"});
  }
}

TEST_CASE("file writer: links, devices, FIFOs and directories are refused and left as they were") {
  Scratch scratch("refused");
  const fs::path victim = scratch.dir / "victim";
  write_text(victim, "precious\n");
  const fs::path link = scratch.dir / "link.json";
  fs::create_symlink(victim, link);
  const fs::path dangling = scratch.dir / "dangling.json";
  fs::create_symlink(scratch.dir / "nowhere", dangling);
  const fs::path fifo = scratch.dir / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const fs::path directory = scratch.dir / "dir.json";
  fs::create_directory(directory);
  // A device of the scratch directory's own (root only), never /dev's: a regression would
  // replace it.
  const fs::path device = scratch.dir / "null.json";
  const bool with_device = ::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;

  struct Case {
    fs::path path;
    const char* why;
  };
  std::vector<Case> cases{Case{link, "is a symbolic link, not a regular file"},
                          Case{dangling, "is a symbolic link, not a regular file"},
                          Case{fifo, "is a FIFO, not a regular file"},
                          Case{directory, "is a directory, not a regular file"},
                          Case{scratch.dir / "", "names a directory, not a file"}};
  if (with_device) cases.push_back({device, "is a character device, not a regular file"});
  for (const Case& c : cases) {
    INFO(c.path);
    const std::optional<std::string> problem = replace_problem(c.path);
    REQUIRE(problem);
    CHECK_THAT(*problem, Catch::Contains(c.why));
    const std::optional<std::string> error = replace_file(c.path, "replacement\n");
    REQUIRE(error);
    CHECK(*error == *problem);
  }
  CHECK(fs::is_symlink(link));
  CHECK(fs::is_symlink(dangling));
  CHECK_FALSE(fs::exists(scratch.dir / "nowhere"));
  CHECK(contents_of(victim) == "precious\n");
  CHECK(fs::is_fifo(fifo));
  if (with_device) CHECK(fs::is_character_file(device));
  std::vector<std::string> names{"dangling.json", "dir.json", "fifo.json", "link.json", "victim"};
  if (with_device) names.insert(names.begin() + 4, "null.json");
  CHECK(scratch.names() == names);
}

TEST_CASE("file writer: symbolic links planted under the old predictable names redirect nothing") {
  // The old writer used FILE.tmp.PID, followed through a symbolic link: a local user who planted
  // links for likely PIDs in a shared directory made root overwrite the file they pointed at.
  Scratch scratch("planted");
  const fs::path victim = scratch.dir / "victim";
  write_text(victim, "precious\n");
  const fs::path path = scratch.dir / "b.json";
  for (int pid = ::getpid() - 5; pid <= ::getpid() + 5; ++pid)
    fs::create_symlink(victim, scratch.dir / ("b.json.tmp." + std::to_string(pid)));
  for (const TemporaryFile temporary : {TemporaryFile::unnamed_if_possible, TemporaryFile::named}) {
    CHECK_FALSE(replace_file(path, "written\n", temporary));
    CHECK(contents_of(path) == "written\n");
    CHECK(contents_of(victim) == "precious\n");
    CHECK_FALSE(fs::is_symlink(path));
  }
  CHECK(scratch.names().size() == 2 + 11);  // b.json, victim and the planted links, nothing else
}

TEST_CASE("file writer: a missing directory and a full device are named with the system's words") {
  const std::optional<std::string> missing = replace_problem("/nonexistent-jitterd-dir/b.json");
  REQUIRE(missing);
  CHECK_THAT(*missing, Catch::Contains("its directory /nonexistent-jitterd-dir") &&
                           Catch::Contains("No such file or directory"));
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE(full >= 0);
  const std::optional<std::string> error = write_all(full, "anything\n");
  ::close(full);
  REQUIRE(error);
  CHECK(*error == "No space left on device");
}
