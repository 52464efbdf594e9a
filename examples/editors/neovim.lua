-- plugtop's language server in neovim's built-in LSP client.
--
-- Put this file in ~/.config/nvim/plugin/ (or `:source` it). It gives
-- cpuplugd.conf, and any *.conf in a directory named cpuplugd, the file
-- type `cpuplugd`, and starts `plugtop lsp` for every such buffer.
--
-- --root: names and live values come from the kernel under `/` by default.
-- To check a file against another guest's files (a copy of its /proc and
-- /sys, or a root served by `plugtop sim --serve DIR`), set the command
-- before this file is read:
--   vim.g.plugtop_cmd = { "plugtop", "lsp", "--root", "/srv/guest1" }
--
-- Works from neovim 0.7 (vim.lsp.start_client) on; 0.8 and later use
-- vim.lsp.start, which reuses one server for all rule files.

local group = vim.api.nvim_create_augroup("plugtop_cpuplugd", { clear = true })

-- The file type, by autocommand so that it also works where
-- vim.filetype.add is not yet used by default (neovim 0.7).
vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  group = group,
  pattern = { "cpuplugd.conf", "*/cpuplugd/*.conf" },
  callback = function(args)
    vim.bo[args.buf].filetype = "cpuplugd"
  end,
})

local function server_config(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  return {
    name = "plugtop",
    cmd = vim.g.plugtop_cmd or { "plugtop", "lsp" },
    root_dir = vim.fn.fnamemodify(name, ":p:h"),
  }
end

local client_id -- the one server on neovim 0.7

vim.api.nvim_create_autocmd("FileType", {
  group = group,
  pattern = "cpuplugd",
  callback = function(args)
    vim.bo[args.buf].commentstring = "# %s"
    -- Completion through the server with Ctrl-X Ctrl-O (neovim 0.7 and
    -- 0.8 set no omnifunc for an LSP buffer by themselves).
    vim.bo[args.buf].omnifunc = "v:lua.vim.lsp.omnifunc"
    -- Hover (what a name means to cpuplugd, its live value) on K: neovim
    -- maps K to hover by itself only from 0.10; before, K runs `man`.
    vim.keymap.set("n", "K", vim.lsp.buf.hover, { buffer = args.buf, desc = "plugtop hover" })
    if vim.lsp.start then
      vim.lsp.start(server_config(args.buf), { bufnr = args.buf })
      return
    end
    if not client_id or not vim.lsp.get_client_by_id(client_id) then
      client_id = vim.lsp.start_client(server_config(args.buf))
    end
    if client_id then
      vim.lsp.buf_attach_client(args.buf, client_id)
    end
  end,
})
