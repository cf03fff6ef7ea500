import { type Sip2DateTime, sip2DateFrom } from './date.js';
import type {
  EndPatronSession,
  FeePaid,
  Hold,
  ItemInformation,
  PatronInformation,
  PatronStatusRequest,
  Renew,
  RenewAll,
  ScStatus,
  SummaryList,
} from './spec.js';

/**
 * Builders for the requests an SC sends, with the boilerplate (language,
 * transaction date, institution, terminal password) filled in once.
 */
/** 99 SC Status: SC unit OK, 80-column printer, protocol 2.00. Sent after login and as keepalive. */
export const SC_STATUS: ScStatus = { code: '99', statusCode: 0, maxPrintWidth: 80, protocolVersion: '2.00' };

export interface RequestDefaults {
  institutionId: string;
  /** AC, when the ILS wants it on every message. */
  terminalPassword?: string | undefined;
  /** 3-char language code; 000 = unspecified. */
  language?: string;
  now?: () => Date;
}

export class Sip2Messages {
  private readonly language: string;
  private readonly now: () => Date;
  private dated: { second: number; value: Sip2DateTime } | null = null;

  constructor(private readonly defaults: RequestDefaults) {
    this.language = defaults.language ?? '000';
    this.now = defaults.now ?? (() => new Date());
  }

  patronStatus(patron: string, password = ''): PatronStatusRequest {
    return {
      code: '23',
      language: this.language,
      transactionDate: this.date(),
      institutionId: this.defaults.institutionId,
      patronIdentifier: patron,
      terminalPassword: this.defaults.terminalPassword ?? '',
      patronPassword: password,
    };
  }

  /** 63; `list` asks for one list in detail, `start`/`end` page it (1-based, inclusive). */
  patronInformation(
    patron: string,
    options: { password?: string; list?: SummaryList; start?: number; end?: number } = {},
  ): PatronInformation {
    return {
      code: '63',
      language: this.language,
      transactionDate: this.date(),
      summary: options.list ?? null,
      institutionId: this.defaults.institutionId,
      patronIdentifier: patron,
      terminalPassword: this.defaults.terminalPassword,
      patronPassword: options.password,
      startItem: options.start === undefined ? undefined : String(options.start),
      endItem: options.end === undefined ? undefined : String(options.end),
    };
  }

  itemInformation(item: string): ItemInformation {
    return {
      code: '17',
      transactionDate: this.date(),
      institutionId: this.defaults.institutionId,
      itemIdentifier: item,
      terminalPassword: this.defaults.terminalPassword,
    };
  }

  renew(patron: string, item: string, options: { password?: string } = {}): Renew {
    return {
      code: '29',
      thirdPartyAllowed: false,
      noBlock: false,
      transactionDate: this.date(),
      nbDueDate: null,
      institutionId: this.defaults.institutionId,
      patronIdentifier: patron,
      patronPassword: options.password,
      itemIdentifier: item,
      terminalPassword: this.defaults.terminalPassword,
    };
  }

  renewAll(patron: string, options: { password?: string } = {}): RenewAll {
    return {
      code: '65',
      transactionDate: this.date(),
      institutionId: this.defaults.institutionId,
      patronIdentifier: patron,
      patronPassword: options.password,
      terminalPassword: this.defaults.terminalPassword,
    };
  }

  /** 15: `+` place, `-` cancel, `*` change. An item hold is type 3, a title hold type 2 (3M BY values). */
  hold(
    mode: '+' | '-' | '*',
    patron: string,
    target: { item?: string; title?: string; pickupLocation?: string; password?: string },
  ): Hold {
    return {
      code: '15',
      holdMode: mode,
      transactionDate: this.date(),
      pickupLocation: target.pickupLocation,
      holdType: target.item ? '3' : '2',
      institutionId: this.defaults.institutionId,
      patronIdentifier: patron,
      patronPassword: target.password,
      itemIdentifier: target.item,
      titleIdentifier: target.title,
      terminalPassword: this.defaults.terminalPassword,
    };
  }

  endSession(patron: string, options: { password?: string } = {}): EndPatronSession {
    return {
      code: '35',
      transactionDate: this.date(),
      institutionId: this.defaults.institutionId,
      patronIdentifier: patron,
      terminalPassword: this.defaults.terminalPassword,
      patronPassword: options.password,
    };
  }

  feePaid(
    patron: string,
    payment: { amount: string; currency: string; feeType?: number; paymentType?: number; feeId?: string },
  ): FeePaid {
    return {
      code: '37',
      transactionDate: this.date(),
      feeType: payment.feeType ?? 1,
      paymentType: payment.paymentType ?? 0,
      currencyType: payment.currency,
      feeAmount: payment.amount,
      institutionId: this.defaults.institutionId,
      patronIdentifier: patron,
      terminalPassword: this.defaults.terminalPassword,
      feeIdentifier: payment.feeId,
    };
  }

  /** The transaction date, one object per second: every message in that second carries the same one. */
  private date(): Sip2DateTime {
    const now = this.now();
    const second = Math.floor(now.getTime() / 1000);
    if (this.dated?.second !== second) this.dated = { second, value: sip2DateFrom(now) };
    return this.dated.value;
  }
}
