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

/** The options of a CheckboxesField ticked in a form's body. */
export const tickedOf = (
  body: Record<string, string | undefined>,
  name: string,
  options: readonly string[],
) => options.filter((o) => body[`${name}:${o}`] === 'on');

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

/** A field's problem beside it: one line, or a list when it has several (a bulk paste's lines). */
function FieldProblem({ name, problem }: { name: string; problem: string }) {
  const lines = problem.split('\n');
  return lines.length === 1 ? (
    <span class="field-problem" id={`e-${name}`}>
      {problem}
    </span>
  ) : (
    <ul class="field-problem" id={`e-${name}`}>
      {lines.map((line) => (
        <li>{line}</li>
      ))}
    </ul>
  );
}

/** A labelled textarea with its hint and its problem (one line or several). */
export function TextAreaField({
  label,
  name,
  form,
  hint,
  rows = 6,
  maxLength,
}: {
  label: ComponentChildren;
  name: string;
  form: FormState;
  hint?: ComponentChildren;
  rows?: number;
  maxLength?: number;
}) {
  const problem = form.problems[name];
  const describedBy = [hint !== undefined && `h-${name}`, problem !== undefined && `e-${name}`]
    .filter(Boolean)
    .join(' ');
  return (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      <textarea
        id={`f-${name}`}
        name={name}
        rows={rows}
        maxLength={maxLength}
        spellcheck={false}
        aria-invalid={problem !== undefined ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
        value={form.values[name] ?? ''}
      />
      {hint !== undefined && (
        <span class="hint" id={`h-${name}`}>
          {hint}
        </span>
      )}
      {problem !== undefined && <FieldProblem name={name} problem={problem} />}
    </div>
  );
}

/**
 * A group of checkboxes (a fieldset with its legend): each option is a field of its own,
 * `${name}:${option}` sent as `on` when ticked (the console's form parser keeps one value per
 * name); `checked` are the options ticked.
 */
export function CheckboxesField({
  legend,
  name,
  options,
  checked,
  problem,
  hint,
}: {
  legend: ComponentChildren;
  name: string;
  options: readonly string[];
  checked: readonly string[];
  problem?: string;
  hint?: ComponentChildren;
}) {
  const describedBy = [hint !== undefined && `h-${name}`, problem !== undefined && `e-${name}`]
    .filter(Boolean)
    .join(' ');
  return (
    <fieldset class="checks" id={`f-${name}`} aria-describedby={describedBy || undefined}>
      <legend>{legend}</legend>
      {hint !== undefined && (
        <span class="hint" id={`h-${name}`}>
          {hint}
        </span>
      )}
      {options.map((o) => (
        <label class="check">
          <input type="checkbox" name={`${name}:${o}`} value="on" checked={checked.includes(o)} />
          <span class="mono">{o}</span>
        </label>
      ))}
      {problem !== undefined && <FieldProblem name={name} problem={problem} />}
    </fieldset>
  );
}
