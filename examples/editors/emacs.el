;;; plugtop's language server in Emacs, through eglot (built in from
;;; Emacs 29; a package before). Load this from your init file.
;;;
;;; cpuplugd.conf, and any *.conf in a directory named cpuplugd, open in
;;; `cpuplugd-mode' (conf-unix-mode with its own name), and eglot starts
;;; `plugtop lsp' for them.
;;;
;;; --root: names and live values come from the kernel under / by
;;; default.  To check against another guest's files (a copy of its /proc
;;; and /sys, or a root served by `plugtop sim --serve DIR'), write
;;; ("plugtop" "lsp" "--root" "/srv/guest1") below instead.

(require 'eglot)

(define-derived-mode cpuplugd-mode conf-unix-mode "cpuplugd"
  "Major mode for cpuplugd rule files, checked by plugtop's language server.")

(add-to-list 'auto-mode-alist '("/cpuplugd\\.conf\\'" . cpuplugd-mode))
(add-to-list 'auto-mode-alist '("/cpuplugd/[^/]*\\.conf\\'" . cpuplugd-mode))

(add-to-list 'eglot-server-programs '(cpuplugd-mode "plugtop" "lsp"))
(add-hook 'cpuplugd-mode-hook #'eglot-ensure)
