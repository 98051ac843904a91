// A threaded run's outcome in words: how a thread ended ("w: ok",
// "w: TYPE: MESSAGE", "w: waiting", "w: never started") and what a hung
// thread waits for ("thread w waits for the module lock of a, held by
// thread main"). The engine hands these out as data (ThreadEnd,
// HangWait); the words are here, in the lowest layer that both report/
// and trace/ see, so that every report and every trace says them one way.
#pragma once

#include <string>
#include <vector>

#include "impsim/engine/threaded_outcome.h"

namespace impsim {

std::string thread_end_text(const ThreadEnd& t);
// Each thread's end in words, in the order given (Engine::thread_ends).
std::vector<std::string> thread_end_texts(const std::vector<ThreadEnd>& ends);
std::string hang_wait_text(const HangWait& w);
// The waits in words, joined by "; ".
std::string hang_waits_text(const std::vector<HangWait>& waits);

}  // namespace impsim
