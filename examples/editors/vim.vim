" plugtop's language server in vim, through the vim-lsp plugin
" (prabirshrestha/vim-lsp). Put this file in ~/.vim/plugin/ or source it
" from your vimrc after the plugin is loaded.
"
" cpuplugd.conf, and any *.conf in a directory named cpuplugd, get the
" file type `cpuplugd`; vim-lsp starts `plugtop lsp` for them.
"
" --root: names and live values come from the kernel under / by default.
" To check against another guest's files (a copy of its /proc and /sys, or
" a root served by `plugtop sim --serve DIR`), set before this is read:
"   let g:plugtop_cmd = ['plugtop', 'lsp', '--root', '/srv/guest1']

augroup plugtop_cpuplugd
  autocmd!
  " set, not setfiletype: the generic conf detection may have named it first
  autocmd BufRead,BufNewFile cpuplugd.conf,*/cpuplugd/*.conf set filetype=cpuplugd
  autocmd FileType cpuplugd setlocal commentstring=#\ %s
  autocmd User lsp_setup call lsp#register_server({
        \ 'name': 'plugtop',
        \ 'cmd': {server_info -> get(g:, 'plugtop_cmd', ['plugtop', 'lsp'])},
        \ 'allowlist': ['cpuplugd'],
        \ })
augroup END
