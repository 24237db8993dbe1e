import { describe, expect, it } from 'vitest';
import { EventDraftSchema } from '../../../../core/events/index.js';
import { createDroidProjector } from '../../../../adapters/droid/project.js';

// session_title_updated: a title is reported as settings.changed until the title is manual (set by
// One Works at creation, or renamed); automatic titles after that are kept as info logs only.

const title = (value: string, updateType?: string) => ({
  sessionId: 's1',
  notification: { type: 'session_title_updated', title: value, ...(updateType ? { updateType } : {}) },
});

describe('droid projector: session titles', () => {
  it('reports automatic titles as settings.changed while the session has no manual title', () => {
    const p = createDroidProjector({ workspace: '/w', epoch: 'e1' });
    const drafts = [...p.project(title('first question', 'first_user_message')), ...p.project(title('Scripted title', 'llm_generated'))];
    expect(drafts).toMatchObject([
      { type: 'settings.changed', settings: { title: 'first question', titleSource: 'first_user_message' } },
      { type: 'settings.changed', settings: { title: 'Scripted title', titleSource: 'llm_generated' } },
    ]);
    for (const draft of drafts) expect(EventDraftSchema.safeParse(draft).success).toBe(true);
  });

  it('keeps a manual rename and turns later automatic titles into info logs', () => {
    const p = createDroidProjector({ workspace: '/w', epoch: 'e1' });
    const renamed = p.project(title('My title', 'manual_rename'));
    const late = p.project(title('first question', 'first_user_message'));
    expect(renamed).toMatchObject([{ type: 'settings.changed', settings: { title: 'My title', titleSource: 'manual_rename' } }]);
    expect(late).toMatchObject([{ type: 'log', level: 'info', message: expect.stringContaining('"first question"') }]);
    expect(late[0]?.key).toBe(createDroidProjector({ workspace: '/w' }).project(title('first question', 'first_user_message'))[0]?.key);
    // A second manual rename still changes the title.
    expect(p.project(title('Other', 'manual_rename'))).toMatchObject([{ type: 'settings.changed', settings: { title: 'Other' } }]);
  });

  it('treats the title as manual from the start when One Works set it at creation', () => {
    const p = createDroidProjector({ workspace: '/w', manualTitle: true });
    expect(p.project(title('Scripted title', 'llm_generated'))).toMatchObject([{ type: 'log', level: 'info' }]);
    expect(p.project(title('untyped update'))).toMatchObject([{ type: 'log', message: expect.stringContaining('unknown source') }]);
  });
});
