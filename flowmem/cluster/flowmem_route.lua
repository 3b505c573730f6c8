-- lua.flowmem_route: what a request is and whose, by flowmem's path rules (the one place the front decides).
-- lua.flowmem_user_id: the top-level "user_id" of a JSON request body, decoded to UTF-8, as flowmem reads it.
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

-- txn.body_read is set once the scan has finished, found or not: without it (the scan failed or ran out of
-- time) the front refuses the request rather than send it to a node that may not own its user.
core.register_fetches('flowmem_user_id', function(txn)
  local body = txn.f:req_body() or ''
  local found = user_id(body)
  txn:set_var('txn.body_read', 1)
  return found
end)

-- ------------------------------------------------------------------------------------------------
-- The route of a request target, by flowmem's path rules (flowmem/http/routes.py's docstring), which the
-- node's router (flowmem/http/routes.py) applies too, so the front sends each request to the node
-- that the node itself would say owns it, in every spelling a node accepts:
--   * an absolute-form target (`http://host/add`) is its path and query;
--   * a run of leading slashes is one (`//add` is `/add`: an endpoint configured as `http://front/`);
--   * a trailing slash is ignored after a literal segment of the template (`/add/`,
--     `/users/u/sessions/`), never after a value: `/users/u/` is no route (it is what a browser
--     sends for `/users/u/sessions/..`, which must never become DELETE /users/u);
--   * an empty `{name}` segment takes its value from the query parameter `name`, decoded as
--     urllib.parse.parse_qsl decodes it (`/users//sessions?user_id=..`); without one it is no value.
-- Every template flowmem serves is here, with what the front does with it (a test checks this table
-- against flowmem's own route table, and the front's answers against the node's router):
--   user      to the node that owns the {user_id} value
--   body      to the node that owns the body's user_id (lua.flowmem_user_id; Add, Search)
--   health    the front's own /health, from its health checks
--   per_node  501 from the front: no one node has every user's (/nodes/{node}/users, .../metrics)
--   any       to any live node: documents and pages that name no user
--   node      the front's /nodes/{node}/users and /metrics, sent to that node as /users and /metrics
-- A target no template fits is the front's own 404, forwarded nowhere.
local ROUTES = {
  { '/add', 'body' },
  { '/search', 'body' },
  { '/health', 'health' },
  { '/users', 'per_node' },
  { '/users/{user_id}', 'user' },
  { '/users/{user_id}/sessions', 'user' },
  { '/users/{user_id}/sessions/{session_id}', 'user' },
  { '/users/{user_id}/messages', 'user' },
  { '/users/{user_id}/messages/{message_id}', 'user' },
  { '/users/{user_id}/export', 'user' },
  { '/users/{user_id}/import', 'user' },
  { '/metrics', 'per_node' },
  { '/openapi.json', 'any' },
  { '/docs', 'any' },
  { '/', 'any' },
  { '/ui', 'any' },
  { '/nodes/{node}/users', 'node', '/users' },
  { '/nodes/{node}/metrics', 'node', '/metrics' },
}

-- "a/b/" -> {"a", "b", ""}; "" -> {}.
local function split(path)
  local out = {}
  if path == '' then return out end
  for piece in string.gmatch(path .. '/', '([^/]*)/') do out[#out + 1] = piece end
  return out
end

for _, route in ipairs(ROUTES) do route.segments = split(string.sub(route[1], 2)) end

-- As Python's urllib.parse.unquote: every %XX (two hex digits) becomes its byte, anything else stays as it
-- is ("100%" is "100%"; HAProxy's url_dec finds nothing there, which would send the request to no owner).
local function unquote(text)
  return (string.gsub(text, '%%(%x%x)', function(hex) return string.char(tonumber(hex, 16)) end))
end

-- The query string's values by name, as urllib.parse.parse_qsl(query, keep_blank_values=True) reads it:
-- fields split on '&', empty ones skipped, a field without '=' a blank value, '+' a space, then unquote.
local function query_values(query)
  local values = {}
  for field in string.gmatch(query .. '&', '([^&]*)&') do
    if field ~= '' then
      local name, value = string.match(field, '^([^=]*)=(.*)$')
      if not name then name, value = field, '' end
      name, value = unquote((string.gsub(name, '%+', ' '))), unquote((string.gsub(value, '%+', ' ')))
      values[name] = values[name] or {}
      table.insert(values[name], value)
    end
  end
  return values
end

-- The values of the first `count` segments if they fit `pattern` (literals exactly, a {name} any non-empty
-- segment or an empty one and the query's `name`), else nil; and a {name} the query gives more than once.
local function fit(pattern, segments, count, query)
  local values, twice = {}, nil
  for i = 1, count do
    local name = string.match(pattern[i], '^{(.*)}$')
    if not name then
      if pattern[i] ~= segments[i] then return nil end
    elseif segments[i] ~= '' then
      values[name] = unquote(segments[i])
    else
      local given = query()[name]
      if not given then return nil end
      values[name] = given[1]
      if #given > 1 then twice = name end
    end
  end
  return values, twice
end

local NOT_A_TARGET = 'the request target is neither a path starting with / nor an absolute http:// URL'
local NO_HOST = 'an absolute-form target needs a host and no userinfo'
local DOT_SEGMENT = "the path holds a dot segment ('.' or '..'); name an id '.' or '..' in the query form " ..
                    '(/users/u/sessions/?session_id=..) or as %2E'

-- The path and query of a target (rule 1: an absolute form's, http or https), or nil and why it is refused
-- (the node refuses the same targets with 400).
local function path_and_query(target)
  if string.sub(target, 1, 1) ~= '/' then
    local scheme, authority, rest = string.match(target, '^([^/?]-)://([^/?]*)(.*)$')
    if not scheme or (string.lower(scheme) ~= 'http' and string.lower(scheme) ~= 'https') then
      return nil, NOT_A_TARGET
    end
    if authority == '' or string.find(authority, '@', 1, true) then return nil, NO_HOST end
    target = '/' .. rest
  end
  return string.match(target, '^([^?]*)%??(.*)$')
end

-- (kind, values, route) for a request target; kind 'bad' (values: why) for a target the node refuses,
-- 'twice' when user_id is given twice in the query, 'unknown' when no template fits. A target that names
-- a user is the user's whatever else it fits (`/users/?user_id=u` fits /users too): never any node's.
local function route(target)
  local path, query = path_and_query(target)
  if not path then return 'bad', query end
  local segments = split((string.gsub(path, '^/+', '')))
  for _, segment in ipairs(segments) do
    -- Clients and proxies remove dot segments: such a target may reach a node as another path.
    if segment == '.' or segment == '..' then return 'bad', DOT_SEGMENT end
  end
  local parsed = nil
  local function params()
    parsed = parsed or query_values(query)
    return parsed
  end
  local found = nil
  for _, candidate in ipairs(ROUTES) do
    local pattern, n = candidate.segments, #candidate.segments
    local values, twice = nil, nil
    if #segments == n then
      values, twice = fit(pattern, segments, n, params)
    end
    if not values and #segments == n + 1 and segments[n + 1] == '' and n > 0
        and not string.find(pattern[n], '^{') then
      values, twice = fit(pattern, segments, n, params)
    end
    if values and values.user_id then
      if twice == 'user_id' then return 'twice' end
      return 'user', values, candidate
    end
    if values and not found then found = { candidate[2], values, candidate } end
  end
  if found then return found[1], found[2], found[3] end
  return 'unknown'
end

-- The route's kind; txn.uid for a user's route, txn.node and txn.node_path for /nodes/{node}/..., txn.reason
-- for a target refused. A failure
-- here sets nothing, and the front answers 404 for a target it has no route for: never any node.
core.register_fetches('flowmem_route', function(txn)
  local kind, values, candidate = route(txn.f:url() or '')
  if kind == 'user' then
    txn:set_var('txn.uid', values.user_id)
  elseif kind == 'bad' then
    txn:set_var('txn.reason', values)
  elseif kind == 'node' then
    txn:set_var('txn.node', values.node)
    txn:set_var('txn.node_path', candidate[3])
  end
  return kind
end)
