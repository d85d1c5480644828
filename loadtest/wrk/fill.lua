-- wrk script: PUT ids 1..KEYS once each with VALUE_SIZE bytes; after the
-- last id it sends only GET /v0/status, until the caller, watching the
-- server's count of 201s, ends wrk (bench-http.sh does). wrk.thread:stop()
-- is not used: it can strand a request generated but not yet written.
-- Use one thread (-t1): the counter is per thread.
local keys = tonumber(os.getenv("KEYS") or "2000000")
local size = tonumber(os.getenv("VALUE_SIZE") or "500")
-- Values are slices of a 64 KiB buffer of random bytes built once per
-- thread: incompressible, like real payloads, so Pebble's block
-- compression does not flatter the store; a slice costs wrk one copy.
local function random_bytes(n)
  local t = {}
  for i = 1, n do t[i] = string.char(math.random(0, 255)) end
  return table.concat(t)
end
local noise = random_bytes(65536)
local function value(size)
  local off = math.random(1, #noise - size + 1)
  return string.sub(noise, off, off + size - 1)
end
local sent = 0
local probed = false

function request()
  -- wrk calls request() once per thread before connecting and discards
  -- the result (Debian's wrk 4.1 never sent id 1): spend it on a status GET.
  if not probed then
    probed = true
    return wrk.format("GET", "/v0/status")
  end
  if sent >= keys then
    return wrk.format("GET", "/v0/status")
  end
  sent = sent + 1
  return wrk.format("PUT", "/v0/entity?id=" .. sent, nil, value(size))
end
