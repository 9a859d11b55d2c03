-- test/bench/endpoint.lua: wrk script of the endpoint benchmark.
--
-- Replays prepared, fully formed HTTP requests (signed by endpoint.py) on
-- keep-alive connections: thread n reads the Lua file REQS .. n .. ".lua",
-- which returns a list of request strings, and sends them in order,
-- wrapping around.  Counts non-200 answers, and prints them with the
-- number of requests sent per thread, so the driver can check that no
-- request failed and whether a list wrapped.

local threads = {}
local counter = 1

function setup(thread)
   thread:set("id", counter)
   table.insert(threads, thread)
   counter = counter + 1
end

function init(args)
   reqs = dofile(os.getenv("REQS") .. id .. ".lua")
   nreqs = #reqs
   i = 0
   sent = 0
   errors = 0
   first_error = ""
end

function request()
   i = i % #reqs + 1
   sent = sent + 1
   return reqs[i]
end

function response(status, headers, body)
   if status ~= 200 then
      errors = errors + 1
      if first_error == "" then
         first_error = status .. " " .. string.sub(body or "", 1, 200)
      end
   end
end

function done(summary, latency, requests)
   for _, t in ipairs(threads) do
      io.write(string.format("thread %d: sent %d of %d prepared, errors %d %s\n",
                             t:get("id"), t:get("sent"), t:get("nreqs"),
                             t:get("errors"), t:get("first_error")))
   end
end
