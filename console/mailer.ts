/**
 * The console's e-mail: through SMTP with nodemailer when SMTP_URL is set; otherwise each message
 * is written to CONSOLE_OUTBOX as an .eml file and its link or code is logged, so a demo works
 * without a mail server.
 */
import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';

export interface ConsoleMail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: ConsoleMail): Promise<void>;
  /** Where mail goes, in words (the log and `make demo`). */
  readonly destination: string;
  close(): void;
}

export interface MailerOptions {
  smtpUrl: string;
  from: string;
  outbox: string;
  log: (message: string, fields?: Record<string, unknown>) => void;
}

export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    const url = new URL(options.smtpUrl);
    return {
      destination: `SMTP ${url.hostname}:${url.port || (url.protocol === 'smtps:' ? 465 : 587)}`,
      async send(mail) {
        await transport.sendMail({ from: options.from, ...mail });
      },
      close: () => transport.close(),
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  let sequence = 0;
  return {
    destination: `the folder ${path.resolve(options.outbox)}`,
    async send(mail) {
      const info = await transport.sendMail({ from: options.from, ...mail });
      fs.mkdirSync(options.outbox, { recursive: true });
      sequence += 1;
      const file = path.join(
        options.outbox,
        `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}-${sequence}.eml`,
      );
      fs.writeFileSync(file, info.message as Buffer, { mode: 0o600 });
      options.log('console mail not sent (no SMTP_URL): written to the outbox', {
        to: mail.to,
        subject: mail.subject,
        file,
        text: mail.text,
      });
    },
    close: () => {},
  };
}
