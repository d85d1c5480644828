-- wrk script: GET or PUT of uniformly random ids 1..KEYS.
--   METHOD=GET|PUT  KEYS=2000000  VALUE_SIZE=500  (environment)
local method = os.getenv("METHOD") or "GET"
local keys = tonumber(os.getenv("KEYS") or "2000000")
local body = nil
if method == "PUT" then
  body = string.rep("v", tonumber(os.getenv("VALUE_SIZE") or "500"))
end

function init(args)
  -- Each wrk thread gets its own sequence; seed from time and the thread's address.
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
end

function request()
  return wrk.format(method, "/v0/entity?id=" .. math.random(1, keys), nil, body)
end
