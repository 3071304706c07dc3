/**
 * Mail-to-fax users (/outbound/users/{email}, PUT is the provider's upsert): a page of them,
 * and a form with the user's profile, its PIN (write-only: typed, sent, cleared; the page only
 * ever knows whether there is one) and its settings groups, which show what an empty field
 * inherits from the chosen profile or, without one, the customer.
 */
import { useEffect, useState } from "preact/hooks";
import type { FaxlineConfiguration, OutboundProfile, OutboundUser, OutboundUserChange } from "@faxline/client/configuration";
import { messageOf } from "../../config-api.ts";
import { t } from "../../i18n.ts";
import { ConfigForm, DeleteButton, OutcomeLine, Pager, useSectionHeading, type Outcome } from "./form-kit.tsx";
import { SettingsGroups } from "./settings-groups.tsx";
import { formOf, groupsOf, inheritedOf, SETTINGS_PATHS, type FormValues } from "./settings-fields.ts";

const PAGE = 20;

function UserForm({ api, user, profiles, onDone }: { api: FaxlineConfiguration; user: OutboundUser | null; profiles: string[]; onDone: (saved: string | null) => void }) {
  const [email, setEmail] = useState(user?.email ?? "");
  const [profile, setProfile] = useState(user?.general?.profile ?? "");
  const [pin, setPin] = useState("");
  const [removePin, setRemovePin] = useState(false);
  const [values, setValues] = useState<FormValues>(formOf((user ?? {}) as Record<string, unknown>));
  const [inherited, setInherited] = useState<Record<string, unknown> | null>(null);
  useEffect(() => {
    const parent = profile === "" ? api.getOutboundSettings({ inherit: true }) : api.getOutboundProfile(profile, { inherit: true });
    parent.then((p) => setInherited(inheritedOf(p as Record<string, unknown>)), () => setInherited(null));
  }, [profile]);
  return (
    <ConfigForm
      id="m2f-user-form"
      title={user ? t("m2f.users.editTitle", { name: user.email }) : t("m2f.users.newTitle")}
      fields={["email", "general.profile", "pin", ...SETTINGS_PATHS]}
      keyField="email"
      onCancel={() => onDone(null)}
      onSubmit={async () => {
        const groups = groupsOf(values);
        const change = { ...groups, general: { ...(groups.general ?? {}), profile: profile === "" ? null : profile } } as OutboundUserChange;
        if (removePin) change.pin = null;
        else if (pin !== "") change.pin = pin;
        try {
          const saved = await api.putOutboundUser(email.trim(), change);
          onDone(saved.email);
        } finally {
          // The PIN is not kept in the page, whether it was taken or refused.
          setPin("");
        }
      }}
    >
      {(field) => (
        <>
          <div class="options-grid">
            {user ? null : (
              <label>
                {t("m2f.users.email")}
                <input {...field("email")} type="email" value={email} maxLength={320} autoComplete="off" onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
              </label>
            )}
            <label>
              {t("m2f.users.profile")}
              <select {...field("general.profile")} value={profile} onChange={(e) => setProfile((e.target as HTMLSelectElement).value)}>
                <option value="">{t("m2f.users.noProfile")}</option>
                {profiles.map((p) => (
                  <option value={p}>{p}</option>
                ))}
              </select>
            </label>
            <label>
              {t("m2f.users.pinNew")}
              <input
                {...field("pin", "m2f-user-pin-hint")}
                type="password"
                inputMode="numeric"
                autoComplete="new-password"
                maxLength={12}
                value={pin}
                disabled={removePin}
                onInput={(e) => setPin((e.target as HTMLInputElement).value)}
              />
              <span id="m2f-user-pin-hint" class="muted small">
                {user?.hasPin ? `${t("m2f.users.hasPin")}. ` : ""}
                {t("m2f.users.pinHint")}
              </span>
            </label>
            {user?.hasPin ? (
              <label class="inline">
                <input type="checkbox" name="removePin" checked={removePin} onChange={(e) => setRemovePin((e.target as HTMLInputElement).checked)} /> {t("m2f.users.pinRemove")}
              </label>
            ) : null}
          </div>
          <SettingsGroups formId="m2f-user-form" values={values} set={(p, v) => setValues({ ...values, [p]: v })} inherited={inherited} field={field} />
        </>
      )}
    </ConfigForm>
  );
}

export function UsersSection({ api, version, changed }: { api: FaxlineConfiguration; version: number; changed: () => void }) {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<{ items: OutboundUser[]; hasMore: boolean } | null>(null);
  const [profiles, setProfiles] = useState<string[]>([]);
  const [editing, setEditing] = useState<OutboundUser | "new" | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const heading = useSectionHeading();

  const load = async () => {
    try {
      const items = await api.listOutboundUsers({ limit: PAGE + 1, offset });
      setPage({ items: items.slice(0, PAGE), hasMore: items.length > PAGE });
      setProfiles((await api.listOutboundProfiles({ limit: 1000 })).map((p: OutboundProfile) => p.name));
    } catch (err) {
      setOutcome({ tone: "error", text: t("m2f.loadFailed", { message: messageOf(err) }) });
    }
  };
  useEffect(() => void load(), [api, offset, version]);

  return (
    <section class="card" aria-labelledby="m2f-users" data-section="users">
      <div class="card-head">
        <h2 id="m2f-users" tabIndex={-1} ref={heading.ref}>{t("m2f.users.title")}</h2>
        <button type="button" class="button-primary" disabled={editing !== null} onClick={() => setEditing("new")}>
          {t("m2f.users.new")}
        </button>
      </div>
      <p class="muted small">{t("m2f.users.intro")}</p>
      {page === null ? null : page.items.length === 0 ? (
        <p class="empty">{t("m2f.users.none")}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t("m2f.users.email")}</th>
              <th scope="col">{t("m2f.users.profile")}</th>
              <th scope="col">{t("m2f.users.pin")}</th>
              <th scope="col">{t("m2f.users.active")}</th>
              <th scope="col">
                <span class="visually-hidden">{t("m2f.edit")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((u) => (
              <tr data-user={u.email}>
                <td class="mono">{u.email}</td>
                <td>{u.general?.profile ?? t("common.none")}</td>
                <td>{u.hasPin ? t("common.yes") : t("common.no")}</td>
                <td>{u.general?.active === false ? t("common.no") : u.general?.active === true ? t("common.yes") : t("m2f.inherited")}</td>
                <td>
                  <button type="button" class="button-quiet" aria-label={`${t("m2f.edit")} ${u.email}`} onClick={() => setEditing(u)}>
                    {t("m2f.edit")}
                  </button>{" "}
                  <DeleteButton
                    name={u.email}
                    onDelete={async () => {
                      try {
                        await api.deleteOutboundUser(u.email);
                        setOutcome({ tone: "success", text: t("m2f.deleted", { name: u.email }) });
                        if (editing !== null && editing !== "new" && editing.email === u.email) setEditing(null);
                        changed();
                      } catch (err) {
                        setOutcome({ tone: "error", text: messageOf(err) });
                      }
                      heading.focus();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page ? <Pager label={t("m2f.users.title")} offset={offset} count={page.items.length} limit={PAGE} hasMore={page.hasMore} onPage={setOffset} /> : null}
      {editing === null ? null : (
        <UserForm
          key={editing === "new" ? "" : editing.email}
          api={api}
          user={editing === "new" ? null : editing}
          profiles={profiles}
          onDone={(saved) => {
            setEditing(null);
            heading.focus();
            if (saved !== null) {
              setOutcome({ tone: "success", text: t("m2f.saved", { name: saved }) });
              changed();
            }
          }}
        />
      )}
      <OutcomeLine outcome={outcome} />
    </section>
  );
}
