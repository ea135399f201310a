#ifndef FABRICCTL_BASE_UTF8_H_
#define FABRICCTL_BASE_UTF8_H_

#include <string>

#include "google/protobuf/message.h"

namespace fabricctl {

// `text` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string ValidUtf8(const std::string& text);

// Makes every string field of `message` (nested messages, repeated fields and map entries
// included) valid UTF-8, as above; returns how many fields it changed. What the kernel, a
// device or a log file supplies (names, lines) may hold any bytes, and protobuf refuses to
// parse, and the JSON printer to print, a string field that is not UTF-8: sanitised before
// it goes on the wire or into a report, one bad byte costs a character, not the message.
int SanitizeUtf8(google::protobuf::Message* message);

// `text` as valid UTF-8 with no control characters: tabs and line breaks become spaces, every
// other C0 or C1 control and DEL becomes U+FFFD. What another process supplies reaches a
// terminal, an XML file or a Prometheus line only in this form (no escape sequences, no
// second line).
std::string PrintableText(const std::string& text);

// SanitizeUtf8 with PrintableText's rule: every string field (not bytes) printable.
int SanitizeText(google::protobuf::Message* message);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_UTF8_H_
