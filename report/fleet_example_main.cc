// Writes the HTML report of a synthetic fleet (N nodes in leaves of 32; default 1,000) to
// stdout, for tests/fleet_html_test.sh to open in headless Chromium.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "report/fleet_example.h"
#include "report/render.h"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  std::cout << fabricctl::report::RenderHtml(fabricctl::report::Fleet(n, 32));
  return 0;
}
