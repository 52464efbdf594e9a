-- The driver of scripts/editor-e2e.sh: runs inside `nvim --headless`,
-- with examples/editors/neovim.lua as the only configuration, and checks
-- that what plugtop's language server offers arrives in the real editor.
-- Every wait is bounded; the first thing missing ends neovim with
-- status 1 after saying what it was.

local env = vim.env
local file, root = env.E2E_FILE, env.E2E_ROOT
local timeout = tonumber(env.E2E_TIMEOUT_MS or "10000")

local function say(text)
  io.stdout:write(text .. "\n")
  io.stdout:flush()
end

local function fail(what)
  say("MISSING: " .. what)
  vim.cmd("cquit 1")
end

vim.g.plugtop_cmd = { env.E2E_PLUGTOP, "lsp", "--root", root }
dofile(env.E2E_CONFIG)

-- The file type for a *.conf in a cpuplugd directory, then the rule file.
vim.cmd("edit " .. vim.fn.fnameescape(env.E2E_OTHER))
if vim.bo.filetype ~= "cpuplugd" then
  return fail("file type cpuplugd for " .. env.E2E_OTHER .. " (got '" .. vim.bo.filetype .. "')")
end
say("filetype: " .. env.E2E_OTHER .. " is cpuplugd")
vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
if vim.bo.filetype ~= "cpuplugd" then
  return fail("file type cpuplugd for " .. file)
end
say("filetype: " .. file .. " is cpuplugd")

-- A line's number (0-based) and the byte column of `needle` in it.
local function find(needle)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local col = line:find(needle, 1, true)
    if col then
      return i - 1, col - 1
    end
  end
  error("no " .. needle .. " in the rule file")
end

local and_line, and_col = find("&&")
local typo_line, typo_col = find(env.E2E_TYPO)

-- 1. Diagnostics: the `&&` one and the typo's, at their line and column.
local function at(line, col)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.lnum == line and d.col == col then
      return d
    end
  end
end
local arrived = vim.wait(timeout, function()
  return at(and_line, and_col) ~= nil and at(typo_line, typo_col) ~= nil
end, 20)
for _, d in ipairs(vim.diagnostic.get(buf)) do
  say(string.format("diagnostic %d:%d %s [%s] %s", d.lnum + 1, d.col + 1,
    vim.diagnostic.severity[d.severity], tostring(d.code), d.message:gsub("\n.*", "")))
end
if not arrived then
  return fail(string.format("diagnostics at %d:%d (&&) and %d:%d (typo)",
    and_line + 1, and_col + 1, typo_line + 1, typo_col + 1))
end
say("ok: diagnostics for && and the typo, at their line and column")

-- The one answer of the server to a request, or nil.
local function ask(method, params)
  local answers = vim.lsp.buf_request_sync(buf, method, params, timeout)
  for _, answer in pairs(answers or {}) do
    if answer.result then
      return answer.result
    end
  end
end
local uri = vim.uri_from_bufnr(buf)
local function position(line, col)
  return { textDocument = { uri = uri }, position = { line = line, character = col } }
end

-- 2. Hover on a reading: its live value under the test root.
local hl, hc = find("meminfo.MemFree")
local hover = ask("textDocument/hover", position(hl, hc + 9))
local shown = hover and hover.contents and (hover.contents.value or hover.contents) or ""
if type(shown) ~= "string" then
  shown = vim.inspect(shown)
end
say("hover: " .. shown:gsub("\n+", " | "))
if not shown:find("now under", 1, true) or not shown:find(env.E2E_LIVE, 1, true) then
  return fail("hover with the live value " .. env.E2E_LIVE)
end
say("ok: hover with the live value " .. env.E2E_LIVE)

-- 3. Completion after `meminfo.`: a name only the test root has.
local completion = ask("textDocument/completion", position(hl, hc + #"meminfo."))
local items = completion and (completion.items or completion) or {}
local labels = {}
for _, item in ipairs(items) do
  table.insert(labels, item.label)
end
say(string.format("completion: %d items: %s", #labels, table.concat(labels, " ", 1, math.min(#labels, 12))))
if not vim.tbl_contains(labels, env.E2E_MEMINFO) then
  return fail("completion of meminfo." .. env.E2E_MEMINFO)
end
say("ok: completion of meminfo." .. env.E2E_MEMINFO)

-- 4. The quick fix on `&&`, applied: the line then holds `&`.
local range = {
  start = { line = and_line, character = and_col },
  ["end"] = { line = and_line, character = and_col + 2 },
}
local actions = ask("textDocument/codeAction", {
  textDocument = { uri = uri },
  range = range,
  context = { diagnostics = {} },
}) or {}
local fix
for _, action in ipairs(actions) do
  say("code action: " .. (action.title or "?"))
  if action.edit and not fix then
    fix = action
  end
end
if not fix then
  return fail("a code action with an edit on &&")
end
vim.lsp.util.apply_workspace_edit(fix.edit, "utf-16")
local changed = vim.api.nvim_buf_get_lines(buf, and_line, and_line + 1, false)[1]
say("after the fix: " .. changed)
if changed:find("&&", 1, true) or not changed:find("&", 1, true) then
  return fail("the line changed to &")
end
say("ok: code action applied, && became &")

-- The server rechecks the changed text: the && finding goes.
if not vim.wait(timeout, function() return at(and_line, and_col) == nil end, 20) then
  return fail("diagnostics updated after the fix")
end
say("ok: the && diagnostic went after the fix")
say("all arrived")
vim.cmd("qall!")
