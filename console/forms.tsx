/**
 * Form fields that show their problem beside them: a form that does not pass is rendered again in
 * place (status 400) with the values kept, a summary at its top and each problem next to its field
 * (aria-invalid, aria-describedby), never on a page of its own.
 */
import type { ComponentChildren } from 'preact';
import { Notice } from './layout.js';

/** Problems by field name; `form` for one that belongs to no single field. */
export type Problems = Record<string, string | undefined>;

/** What a form shows: the values sent (or the defaults) and their problems. */
export interface FormState {
  values: Record<string, string | undefined>;
  problems: Problems;
}

export const blankForm = (values: Record<string, string | undefined> = {}): FormState => ({
  values,
  problems: {},
});

export const hasProblems = (problems: Problems) => Object.values(problems).some((p) => p !== undefined);

/**
 * The summary at the top of a form that did not pass: the count of problems beside fields (each
 * is said there, once), and a problem of the whole form in full.
 */
export function ProblemSummary({ problems }: { problems: Problems }) {
  const fields = Object.entries(problems).filter(([name, p]) => name !== 'form' && p !== undefined);
  const whole = problems.form;
  if (fields.length === 0 && whole === undefined) return null;
  return (
    <Notice kind="error">
      {whole}
      {whole !== undefined && fields.length > 0 && ' '}
      {fields.length > 0 &&
        `Check the form: ${fields.length === 1 ? 'one problem' : `${fields.length} problems`}, marked below.`}
    </Notice>
  );
}

/** The input attributes the console's forms use. */
interface InputProps {
  type?: 'text' | 'email' | 'date';
  autocomplete?: string;
  required?: boolean;
  maxLength?: number;
  inputMode?: 'numeric' | 'text';
  pattern?: string;
  min?: string;
  disabled?: boolean;
}

/** A labelled input with its hint and its problem. */
export function Field({
  label,
  name,
  form,
  hint,
  type = 'text',
  ...input
}: InputProps & { label: ComponentChildren; name: string; form: FormState; hint?: ComponentChildren }) {
  const problem = form.problems[name];
  const describedBy = [hint !== undefined && `h-${name}`, problem !== undefined && `e-${name}`]
    .filter(Boolean)
    .join(' ');
  return (
    <label>
      {label}
      <input
        {...input}
        type={type as 'text'}
        id={`f-${name}`}
        name={name}
        value={form.values[name] ?? ''}
        aria-invalid={problem !== undefined ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
      />
      {hint !== undefined && (
        <span class="hint" id={`h-${name}`}>
          {hint}
        </span>
      )}
      {problem !== undefined && (
        <span class="field-problem" id={`e-${name}`}>
          {problem}
        </span>
      )}
    </label>
  );
}

/** A labelled select of `options`, with its hint and its problem. */
export function SelectField({
  label,
  name,
  form,
  options,
  hint,
}: {
  label: ComponentChildren;
  name: string;
  form: FormState;
  options: readonly string[];
  hint?: ComponentChildren;
}) {
  const problem = form.problems[name];
  return (
    <label>
      {label}
      <select
        id={`f-${name}`}
        name={name}
        aria-invalid={problem !== undefined ? 'true' : undefined}
        aria-describedby={problem !== undefined ? `e-${name}` : hint !== undefined ? `h-${name}` : undefined}
      >
        {options.map((o) => (
          <option value={o} selected={o === form.values[name]}>
            {o}
          </option>
        ))}
      </select>
      {hint !== undefined && (
        <span class="hint" id={`h-${name}`}>
          {hint}
        </span>
      )}
      {problem !== undefined && (
        <span class="field-problem" id={`e-${name}`}>
          {problem}
        </span>
      )}
    </label>
  );
}
