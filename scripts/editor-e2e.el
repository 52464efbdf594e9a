;;; The Emacs half of scripts/editor-e2e.sh: eglot (the distribution's
;;; package) with examples/editors/emacs.el as the configuration, driving
;;; `plugtop lsp' on the script's test root. Prints what arrived and
;;; "all arrived" last; exits 1 at the first thing missing.

(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (add-to-list 'load-path dir))
(load (getenv "E2E_CONFIG"))

;; The example starts "plugtop lsp" from PATH on the machine's own root;
;; here, the binary just built, on the test root.
(push `(cpuplugd-mode ,(getenv "E2E_PLUGTOP") "lsp" "--root" ,(getenv "E2E_ROOT"))
      eglot-server-programs)

(defun e2e-missing (fmt &rest args)
  (princ (apply #'format (concat "MISSING: " fmt "\n") args))
  (kill-emacs 1))

(defun e2e-wait (pred)
  "Wait for PRED while the server talks, for at most 30 s."
  (let ((end (+ (float-time) 30)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (funcall pred)))

(defvar e2e-diagnostics nil)
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (setq e2e-diagnostics (plist-get params :diagnostics)))))

(find-file (getenv "E2E_FILE"))
(unless (eq major-mode 'cpuplugd-mode)
  (e2e-missing "the file type (the mode is %s)" major-mode))
(princ "file type: cpuplugd-mode\n")
;; eglot-ensure waits for a command loop that batch Emacs never runs.
(apply #'eglot (eglot--guess-contact))
(defvar e2e-server (eglot-current-server))
(unless e2e-server (e2e-missing "the server"))

(unless (e2e-wait (lambda () (> (length e2e-diagnostics) 0)))
  (e2e-missing "diagnostics"))
(let ((found (mapcar (lambda (d)
                       (let ((start (plist-get (plist-get d :range) :start)))
                         (format "%d:%d %s" (1+ (plist-get start :line))
                                 (1+ (plist-get start :character))
                                 (car (split-string (plist-get d :message) "\n")))))
                     e2e-diagnostics)))
  (dolist (f found) (princ (format "diagnostic: %s\n" f)))
  (unless (seq-some (lambda (f) (string-match-p "&&" f)) found)
    (e2e-missing "the diagnostic for &&"))
  (unless (seq-some (lambda (f) (string-match-p (getenv "E2E_TYPO") f)) found)
    (e2e-missing "the diagnostic for the typo")))

(defun e2e-at (needle)
  (goto-char (point-min))
  (unless (search-forward needle nil t) (e2e-missing "%s in the file" needle))
  (goto-char (match-beginning 0)))

(e2e-at "MemFree")
(let* ((hover (jsonrpc-request e2e-server :textDocument/hover
                               (eglot--TextDocumentPositionParams)))
       (text (plist-get (plist-get hover :contents) :value)))
  (unless (and text (string-match-p (getenv "E2E_LIVE") text))
    (e2e-missing "the live value in the hover: %S" text))
  (princ (format "hover: %s\n" (car (last (split-string text "\n" t))))))

(e2e-at "MemFree")
(let* ((items (jsonrpc-request e2e-server :textDocument/completion
                               (eglot--TextDocumentPositionParams)))
       (items (if (vectorp items) items (plist-get items :items)))
       (labels (mapcar (lambda (i) (plist-get i :label)) items)))
  (unless (member (getenv "E2E_MEMINFO") labels)
    (e2e-missing "the completion %s among %S" (getenv "E2E_MEMINFO") labels))
  (princ (format "completion: %s among %d names\n" (getenv "E2E_MEMINFO") (length labels))))

(e2e-at "&&")
(let* ((range (list :start (eglot--pos-to-lsp-position (line-beginning-position))
                    :end (eglot--pos-to-lsp-position (line-end-position))))
       (actions (jsonrpc-request e2e-server :textDocument/codeAction
                                 (list :textDocument (eglot--TextDocumentIdentifier)
                                       :range range
                                       :context (list :diagnostics []))))
       (fix (seq-find (lambda (a) (string-match-p "&" (plist-get a :title))) actions)))
  (unless fix (e2e-missing "the quick fix for &&: %S" actions))
  (eglot--apply-workspace-edit (plist-get fix :edit))
  (e2e-at "&")
  (when (looking-at "&&") (e2e-missing "the fix applied"))
  (princ (format "code action: %s, applied\n" (plist-get fix :title))))

;; The fixed text reaches the server, which takes the finding back.
(setq e2e-diagnostics nil)
(eglot--signal-textDocument/didChange)
(unless (e2e-wait (lambda () e2e-diagnostics)) (e2e-missing "diagnostics after the fix"))
(when (seq-some (lambda (d) (string-match-p "&&" (plist-get d :message))) e2e-diagnostics)
  (e2e-missing "the && finding gone after the fix"))
(princ "all arrived\n")
(set-buffer-modified-p nil)
(eglot-shutdown e2e-server)
(kill-emacs 0)
