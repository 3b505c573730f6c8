-- lua.flowmem_user_id: the top-level "user_id" of a JSON request body, decoded to UTF-8, as flowmem reads it.
-- lua.flowmem_path_user: the user id in a /users/{user_id}/... path, percent-decoded as flowmem decodes it.
--
-- HAProxy 2.6's json_query cannot route flowmem's bodies: it decodes \u00e9 to the byte E9 rather
-- than UTF-8, finds nothing for surrogate pairs (\ud83d\ude42) or \/, and takes the first of
-- two user_id keys where Python's json takes the last. Any of those would send a user's Add to a
-- node that does not own the user. This scanner answers as Python's json.loads does for every body
-- flowmem accepts: the last top-level user_id, escapes decoded, at any nesting depth (it keeps a
-- depth count, no recursion). For a body flowmem refuses (not JSON, not an object, user_id not a
-- string, an unpaired surrogate) its answer does not matter: flowmem writes nothing for it.

local function utf8_char(code)
  if code < 0x80 then return string.char(code) end
  if code < 0x800 then return string.char(0xC0 | (code >> 6), 0x80 | (code & 0x3F)) end
  if code < 0x10000 then
    return string.char(0xE0 | (code >> 12), 0x80 | ((code >> 6) & 0x3F), 0x80 | (code & 0x3F))
  end
  return string.char(0xF0 | (code >> 18), 0x80 | ((code >> 12) & 0x3F), 0x80 | ((code >> 6) & 0x3F),
                     0x80 | (code & 0x3F))
end

local SIMPLE = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }

-- The string starting at the quote at `pos`: its decoded text (nil if flowmem would refuse it) and the
-- position after its closing quote. An invalid escape never stops the scan before the string's end.
local function read_string(body, pos)
  local parts, i, valid = {}, pos + 1, true
  while true do
    local j = string.find(body, '["\\]', i)
    if not j then return nil, #body + 1 end
    parts[#parts + 1] = string.sub(body, i, j - 1)
    if string.sub(body, j, j) == '"' then
      if valid then return table.concat(parts), j + 1 end
      return nil, j + 1
    end
    local e = string.sub(body, j + 1, j + 1)
    i = j + 2
    if SIMPLE[e] then
      parts[#parts + 1] = SIMPLE[e]
    elseif e == 'u' and string.find(body, '^%x%x%x%x', j + 2) then
      local code = tonumber(string.sub(body, j + 2, j + 5), 16)
      i = j + 6
      if code >= 0xD800 and code <= 0xDBFF and string.find(body, '^\\u[dD][c-fC-F]%x%x', i) then
        code = 0x10000 + ((code - 0xD800) << 10) + (tonumber(string.sub(body, i + 2, i + 5), 16) - 0xDC00)
        i = i + 6
      end
      if code >= 0xD800 and code <= 0xDFFF then valid = false end -- unpaired: flowmem refuses it (422)
      parts[#parts + 1] = utf8_char(code)
    else
      valid = false -- not JSON: flowmem refuses the body (400)
    end
  end
end

-- The position after the string starting at the quote at `pos`, decoding nothing (message contents are long).
local function skip_string(body, pos)
  local i = pos + 1
  while true do
    local j = string.find(body, '["\\]', i)
    if not j then return #body + 1 end
    if string.byte(body, j) == 34 then return j + 1 end
    i = j + 2
  end
end

-- The position after the value starting at `pos` (any JSON value; containers by depth count).
local function skip_value(body, pos)
  local c = string.sub(body, pos, pos)
  if c == '"' then return skip_string(body, pos) end
  if c ~= '{' and c ~= '[' then
    local _, last = string.find(body, '^[%w%+%-%.]*', pos)
    return last + 1
  end
  local depth, i = 0, pos
  while true do
    local j = string.find(body, '[%[%]{}"]', i)
    if not j then return #body + 1 end
    local d = string.sub(body, j, j)
    if d == '"' then
      i = skip_string(body, j)
    else
      depth = depth + ((d == '{' or d == '[') and 1 or -1)
      i = j + 1
      if depth == 0 then return i end
    end
  end
end

local function skip_space(body, pos)
  local _, last = string.find(body, '^[ \t\r\n]*', pos)
  return last + 1
end

-- The last top-level "user_id" string of `body`, or nil.
local function user_id(body)
  local i = skip_space(body, 1)
  if string.sub(body, i, i) ~= '{' then return nil end
  i = skip_space(body, i + 1)
  local found = nil
  while string.sub(body, i, i) == '"' do
    local key, after = read_string(body, i)
    i = skip_space(body, after)
    if string.sub(body, i, i) ~= ':' then return nil end
    i = skip_space(body, i + 1)
    if key == 'user_id' then
      if string.sub(body, i, i) == '"' then found = read_string(body, i) else found = nil end
    end
    i = skip_space(body, skip_value(body, i))
    if string.sub(body, i, i) ~= ',' then break end
    i = skip_space(body, i + 1)
  end
  return found
end

-- As Python's urllib.parse.unquote: every %XX (two hex digits) becomes its byte, anything else stays as it
-- is ("100%" is "100%"; HAProxy's url_dec finds nothing there, which would send the request to no owner).
core.register_fetches('flowmem_path_user', function(txn)
  local segment = string.match(txn.f:path() or '', '^/users/([^/]*)')
  if not segment then return nil end
  return (string.gsub(segment, '%%(%x%x)', function(hex) return string.char(tonumber(hex, 16)) end))
end)

-- txn.body_read is set once the scan has finished, found or not: without it (the scan failed or ran out of
-- time) the front refuses the request rather than send it to a node that may not own its user.
core.register_fetches('flowmem_user_id', function(txn)
  local body = txn.f:req_body() or ''
  local found = user_id(body)
  txn:set_var('txn.body_read', 1)
  return found
end)
