-- wrk script: GET or PUT of uniformly random ids 1..KEYS.
--   METHOD=GET|PUT  KEYS=2000000  VALUE_SIZE=500  (environment)
local method = os.getenv("METHOD") or "GET"
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

function init(args)
  -- Each wrk thread gets its own sequence; seed from time and the thread's address.
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
end

function request()
  local body = nil
  if method == "PUT" then
    body = value(size)
  end
  return wrk.format(method, "/v0/entity?id=" .. math.random(1, keys), nil, body)
end
