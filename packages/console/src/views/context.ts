import type { OperatorRole } from 'service-protocol';

/** What every view gets: where to draw, who is signed in, the route's parameter. */
export interface ViewContext {
  root: HTMLElement;
  role: OperatorRole;
  /** The part of the route after the view's name (`#/users/usr_x` → `usr_x`). */
  param: string | undefined;
  /** Draws the view again (after a change). */
  refresh(): void;
}

export const canAct = (context: ViewContext) => context.role === 'admin';
