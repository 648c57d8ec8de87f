import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { messageOf } from './api';

/** A page's data: loaded on mount and again when `deps` change or `reload` is called. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...state, reload, setData: (data: T) => setState({ data, loading: false }) };
}

/** What came of the last action: an error as an `alert` (read out at once), anything else as a `status`. */
export type Message = { kind: 'error' | 'done'; text: string } | null;

export function Notice({ message }: { message: Message }) {
  // Both regions stay in the page, so a screen reader hears each new message.
  return (
    <>
      <div role="alert" class="notice error" hidden={message?.kind !== 'error'}>
        {message?.kind === 'error' ? message.text : ''}
      </div>
      <div role="status" class="notice done" hidden={message?.kind !== 'done'}>
        {message?.kind === 'done' ? message.text : ''}
      </div>
    </>
  );
}

/** Runs an action, keeping its message and whether it is under way. */
export function useAction() {
  const [message, setMessage] = useState<Message>(null);
  const [busy, setBusy] = useState(false);
  const run = useCallback(async (action: () => Promise<string | undefined>) => {
    setBusy(true);
    setMessage(null);
    try {
      const done = await action();
      setMessage(done ? { kind: 'done', text: done } : null);
      return true;
    } catch (error) {
      setMessage({ kind: 'error', text: messageOf(error) });
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { message, setMessage, busy, run };
}

export function LoadError({ error }: { error: unknown }) {
  return (
    <p role="alert" class="notice error">
      {messageOf(error)}
    </p>
  );
}

/** A modal confirmation: focus moves into it, Escape cancels, the page behind cannot be reached until it closes. */
export function ConfirmDialog(props: { title: string; children: ComponentChildren; confirmLabel: string; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const opener = document.activeElement;
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    // Closed by unmounting: the focus goes back to the control that opened it, not to the top of the page.
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={props.onCancel} class="confirm">
      <h2 id={titleId}>{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** Copies text; says whether it worked (the clipboard can be refused), next to the button. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [result, setResult] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setResult('Copied');
    } catch {
      setResult('The browser refused the clipboard: select the text and copy it by hand');
    }
  };
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" class="inline-status">
        {result}
      </span>
    </>
  );
}

/** Saves text as a file through a link the page clicks (no server round trip: the text exists only here). */
export function downloadText(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A labelled field with its error beside it, tied to the input for screen readers. */
export function Field(props: {
  label: string;
  error?: string | undefined;
  hint?: string;
  children: (ids: { id: string; describedBy?: string }) => ComponentChildren;
}) {
  const id = useId();
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const describedBy = [props.hint ? hintId : '', props.error ? errorId : ''].filter((part) => part !== '').join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children({ id, describedBy })}
      {props.hint && (
        <small id={hintId} class="hint">
          {props.hint}
        </small>
      )}
      {props.error && (
        <small id={errorId} class="field-error">
          {props.error}
        </small>
      )}
    </div>
  );
}

/** Current time in Unix seconds, as the key states are judged. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);
