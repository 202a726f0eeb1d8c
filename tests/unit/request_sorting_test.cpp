// SPDX-License-Identifier: Apache-2.0
// Sorting a connection to a lane by its first request (export/request_sorting.h), on literal
// bytes, and the addresses remembered as scrapers'.
#include <catch2/catch.hpp>

#include <string>

#include "export/request_sorting.h"

using namespace jitterd;

TEST_CASE("a scrape of the telemetry path goes to the telemetry lane", "[request_sorting]") {
  CHECK(sort_first_request("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "/metrics") == Lane::telemetry);
  CHECK(sort_first_request("HEAD /metrics HTTP/1.1\r\n", "/metrics") == Lane::telemetry);
  CHECK(sort_first_request("GET /metrics?format=text HTTP/1.1\r\n", "/metrics") == Lane::telemetry);
  CHECK(sort_first_request("\r\nGET /metrics HTTP/1.1\r\n", "/metrics") == Lane::telemetry);
  CHECK(sort_first_request("\n\nGET /metrics HTTP/1.1\r\n", "/metrics") == Lane::telemetry);
  CHECK(sort_first_request("GET /custom/path HTTP/1.1\r\n", "/custom/path") == Lane::telemetry);
}

TEST_CASE("everything else goes to the page lane", "[request_sorting]") {
  for (const char* bytes :
       {"GET / HTTP/1.1\r\n", "GET /status.json HTTP/1.1\r\n", "GET /baseline.json HTTP/1.1\r\n",
        "GET /metricsx HTTP/1.1\r\n", "GET /metrics/ HTTP/1.1\r\n", "POST /metrics HTTP/1.1\r\n",
        "get /metrics HTTP/1.1\r\n", "GET  /metrics HTTP/1.1\r\n", "\r\n\r\n\r\nGET /metrics HTTP/1.1\r\n",
        "\x16\x03\x01\x02\x00\x01"})
    CHECK(sort_first_request(bytes, "/metrics") == Lane::pages);
  // A request line still in pieces (a slow sender's first bytes): not waited for.
  for (const char* piece : {"G", "GET", "GET /met", "GET /metrics", "HEAD /metrics"})
    CHECK(sort_first_request(piece, "/metrics") == Lane::pages);
  CHECK(sort_first_request("GET /metrics HTTP/1.1\r\n", "/other") == Lane::pages);
  CHECK(sort_first_request("GET / HTTP/1.1\r\n", "") == Lane::pages);
}

TEST_CASE("a scraper's address is remembered until it asks for something else", "[request_sorting]") {
  ScraperAddresses scrapers;
  CHECK_FALSE(scrapers.scraper("10.0.0.1"));
  scrapers.saw("10.0.0.1", true);
  CHECK(scrapers.scraper("10.0.0.1"));
  scrapers.saw("10.0.0.1", false);
  CHECK_FALSE(scrapers.scraper("10.0.0.1"));
  scrapers.saw("10.0.0.1", true);
  // Bounded: the least recently seen forgotten first.
  for (std::size_t i = 0; i < ScraperAddresses::kScraperAddresses; ++i)
    scrapers.saw("10.1." + std::to_string(i), true);
  CHECK_FALSE(scrapers.scraper("10.0.0.1"));
  CHECK(scrapers.scraper("10.1.0"));
  CHECK(scrapers.scraper("10.1." + std::to_string(ScraperAddresses::kScraperAddresses - 1)));
}
